/**
 * The one case table of the nesting limit (MAX_JSON_DEPTH, packages/library/src/core/json-depth.ts):
 * arrays and objects nested around it, as text and as values. test/api/json-depth.test.ts runs
 * every case against every walker of JSON text or values, each of which imports the constant.
 */
import { MAX_JSON_DEPTH } from "../../packages/library/src/core/json-depth.js";

export interface DepthCase {
  readonly name: string;
  /** Arrays and objects nested inside one another, the outermost counted. */
  readonly levels: number;
  readonly text: string;
  readonly value: unknown;
}

function nestedArrays(levels: number): DepthCase {
  let value: unknown = [];
  for (let level = 1; level < levels; level++) value = [value];
  return {
    name: `${levels} nested arrays`,
    levels,
    text: "[".repeat(levels) + "]".repeat(levels),
    value,
  };
}

function nestedObjects(levels: number): DepthCase {
  let value: unknown = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return {
    name: `${levels} nested objects`,
    levels,
    text: '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1),
    value,
  };
}

/** Both ways of nesting, at the limit, one level either side of it, and far past it. */
const LEVELS = [
  1,
  2,
  MAX_JSON_DEPTH - 1,
  MAX_JSON_DEPTH,
  MAX_JSON_DEPTH + 1,
  MAX_JSON_DEPTH + 2,
  5000,
];

export const depthCases: readonly DepthCase[] = LEVELS.flatMap((levels) => [
  nestedArrays(levels),
  nestedObjects(levels),
]);
