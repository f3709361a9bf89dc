import { CanonicalFragment } from "./canonical-fragment.js";
import { formatJsonPath } from "./strict-json.js";

/**
 * The slow walk behind the canonical writer's errors: it visits values in the writer's order
 * (sorted keys, members whose value is undefined left out) and returns the first value the
 * writer refuses, with its JSON path. Cycles are found exactly, by the ancestors on the way.
 */
export interface NonCanonicalValue {
  readonly what: string;
  readonly where: string;
}

const MAX_DEPTH = 1000; // MAX_CANONICAL_DEPTH of canonical-json.ts

interface Walk {
  readonly path: (string | number)[];
  readonly ancestors: Map<object, number>;
}

function describeType(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : String(value);
    case "object":
      return undefined;
    default:
      return typeof value;
  }
}

function visit(value: unknown, depth: number, walk: Walk): string | undefined {
  const scalarProblem = describeType(value);
  if (scalarProblem !== undefined) return scalarProblem;
  if (typeof value !== "object" || value === null) return undefined;
  const earlier = walk.ancestors.get(value);
  if (earlier !== undefined) {
    return `a cycle (this value is also at ${formatJsonPath(walk.path.slice(0, earlier))})`;
  }
  if (depth > MAX_DEPTH) return `nesting deeper than ${MAX_DEPTH} levels`;
  walk.ancestors.set(value, walk.path.length);
  const problem = visitContainer(value, depth, walk);
  walk.ancestors.delete(value);
  return problem;
}

function visitMember(key: string | number, member: unknown, depth: number, walk: Walk) {
  walk.path.push(key);
  const problem = visit(member, depth + 1, walk);
  if (problem === undefined) walk.path.pop();
  return problem;
}

function visitContainer(value: object, depth: number, walk: Walk): string | undefined {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (item === undefined) {
        walk.path.push(index);
        return "undefined";
      }
      const problem = visitMember(index, item, depth, walk);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  let entries: [string, unknown][];
  if (prototype === Object.prototype || prototype === null) {
    entries = Object.keys(value).map((key) => [key, (value as Record<string, unknown>)[key]]);
  } else if (value instanceof Map) {
    entries = [];
    for (const [key, member] of value as Map<unknown, unknown>) {
      if (typeof key !== "string") return "a Map key that is not a string";
      entries.push([key, member]);
    }
  } else if (value instanceof CanonicalFragment) {
    return value.depth === depth ? undefined : "a fragment written at another depth";
  } else {
    return `an instance of ${(value as { constructor?: { name?: string } }).constructor?.name ?? "an unknown class"}`;
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, member] of entries) {
    if (member === undefined) continue;
    const problem = visitMember(key, member, depth, walk);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The first value the canonical writer refuses in `value` written at `depth`. */
export function findNonCanonicalValue(value: unknown, depth: number): NonCanonicalValue {
  const walk: Walk = { path: [], ancestors: new Map() };
  const what = visit(value, depth, walk) ?? "a value";
  return { what, where: formatJsonPath(walk.path) };
}
