import { VerbatimError } from "./errors.js";
import { formatJsonPath } from "./strict-json.js";

/**
 * The canonical JSON writer (docs/format-1.md, "Byte rules"):
 * - object keys sorted by UTF-16 code units at every level (Maps are written as objects);
 * - every non-empty container expanded, one member per line, two spaces per level;
 * - `"key" : value` separators, `{}` and `[]` for empty containers;
 * - strings escaped as ECMAScript's JSON.stringify does: `"` and `\`, U+0000–U+001F (the short
 *   forms \b \t \n \f \r, the others as \u00xx), lone surrogates as \udxxx; everything else
 *   (non-ASCII, `/`, U+2028, U+2029, U+007F) is written as itself, in UTF-8;
 * - numbers as ECMAScript prints them (`-0` prints `0`, `1e21` prints `1e+21`); NaN and
 *   Infinity are refused;
 * - object members whose value is `undefined` are left out; `undefined` in an array is refused;
 * - LF line endings and exactly one final LF (added by `canonicalJsonText`).
 */

/** A value already written canonically at a given depth, spliced in as is. */
export class CanonicalFragment {
  constructor(
    readonly text: string,
    readonly depth: number,
  ) {}
}

const MAX_DEPTH = 1000;
const indents: string[] = [""];
function indentOf(depth: number): string {
  let indent = indents[depth];
  if (indent === undefined) {
    indent = "  ".repeat(depth);
    indents[depth] = indent;
  }
  return indent;
}

/** Thrown inside the writer; containers prepend their segment on the way out. */
class RefusedValue {
  /** Path segments and the containers holding them, innermost first. */
  readonly segments: (string | number)[] = [];
  readonly containers: unknown[] = [];
  constructor(readonly what: string) {}
}

/** The error's JSON path; for a cycle, the path of the first value met twice on the way down. */
function describeRefusal(error: RefusedValue): { what: string; where: string } {
  const segments = error.segments.slice().reverse();
  const containers = error.containers.slice().reverse();
  for (let later = 1; later < containers.length; later++) {
    const earlier = containers.indexOf(containers[later]);
    if (earlier < later) {
      return {
        what: `a cycle (this value is also at ${formatJsonPath(segments.slice(0, earlier))})`,
        where: formatJsonPath(segments.slice(0, later)),
      };
    }
  }
  return { what: error.what, where: formatJsonPath(segments) };
}

function refuse(what: string): never {
  throw new RefusedValue(what);
}

function writeNumber(value: number): string {
  if (!Number.isFinite(value)) refuse(String(value));
  return String(value);
}

function writeArray(value: readonly unknown[], depth: number): string {
  const length = value.length;
  if (length === 0) return "[]";
  const inner = indentOf(depth + 1);
  let out = "[\n" + inner;
  for (let index = 0; index < length; index++) {
    if (index > 0) out += ",\n" + inner;
    try {
      const item = value[index];
      if (item === undefined) refuse("undefined");
      out += writeValue(item, depth + 1);
    } catch (error) {
      if (error instanceof RefusedValue) {
        error.segments.push(index);
        error.containers.push(value);
      }
      throw error;
    }
  }
  return out + "\n" + indentOf(depth) + "]";
}

function writeMembers(
  container: object,
  keys: string[],
  get: (key: string) => unknown,
  depth: number,
): string {
  keys.sort();
  const inner = indentOf(depth + 1);
  let out = "";
  for (const key of keys) {
    const member = get(key);
    if (member === undefined) continue;
    try {
      out +=
        (out === "" ? "{\n" : ",\n") +
        inner +
        JSON.stringify(key) +
        " : " +
        writeValue(member, depth + 1);
    } catch (error) {
      if (error instanceof RefusedValue) {
        error.segments.push(key);
        error.containers.push(container);
      }
      throw error;
    }
  }
  if (out === "") return "{}";
  return out + "\n" + indentOf(depth) + "}";
}

function writeValue(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return writeNumber(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (depth > MAX_DEPTH) refuse(`a cycle or nesting deeper than ${MAX_DEPTH} levels`);
      if (Array.isArray(value)) return writeArray(value, depth);
      if (value instanceof Map) {
        const map = value as Map<unknown, unknown>;
        const keys: string[] = [];
        for (const key of map.keys()) {
          if (typeof key !== "string") refuse("a Map key that is not a string");
          keys.push(key);
        }
        return writeMembers(map, keys, (key) => map.get(key), depth);
      }
      if (value instanceof CanonicalFragment) {
        if (value.depth !== depth) refuse("a fragment written at another depth");
        return value.text;
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) {
        refuse(`an instance of ${value.constructor.name}`);
      }
      const record = value as Record<string, unknown>;
      return writeMembers(record, Object.keys(record), (key) => record[key], depth);
    }
    default:
      return refuse(typeof value);
  }
}

function write(value: unknown, depth: number): string {
  try {
    return writeValue(value, depth);
  } catch (error) {
    if (!(error instanceof RefusedValue)) throw error;
    const { what, where } = describeRefusal(error);
    throw new VerbatimError("non_canonical_value", `${what} cannot be written as canonical JSON`, {
      where,
      hint: "Pass only finite numbers, strings, booleans, null, arrays, plain objects and Maps",
    });
  }
}

/** The canonical text of a value at a depth (no final LF): for fragments and for tests. */
export function canonicalJsonFragment(value: unknown, depth = 0): string {
  return write(value, depth);
}

/** The canonical text of a document: the value at depth 0 and exactly one final LF. */
export function canonicalJsonText(value: unknown): string {
  return write(value, 0) + "\n";
}

/** The canonical bytes of a document (UTF-8 of `canonicalJsonText`). */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJsonText(value), "utf8");
}
