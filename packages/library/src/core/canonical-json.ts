import { CanonicalFragment } from "./canonical-fragment.js";
import { VerbatimError } from "./errors.js";
import { MAX_JSON_DEPTH } from "./json-depth.js";
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
 *
 * The writer pushes pieces of text onto one array and joins them once (no deep string ropes,
 * no try/catch on the way down). When it meets a value it refuses, it writes the value again
 * with `tracking` set: the same walk then keeps the JSON path it is at and the containers it is
 * inside, and stops at the first refused value with its path, or at the first cycle exactly
 * (without tracking a cycle is refused once it nests deeper than MAX_JSON_DEPTH).
 */

export { CanonicalFragment };

/** `"\n" + indent` for each depth. */
const lineStarts: string[] = [];
function lineStart(depth: number): string {
  let start = lineStarts[depth];
  if (start === undefined) {
    start = "\n" + "  ".repeat(depth);
    lineStarts[depth] = start;
  }
  return start;
}

/**
 * `"{" or "," + "\n" + indent + "key" + " : "` by depth and key, for keys that repeat (field
 * names): index 0 holds the first member's prefix, index 1 the others'.
 */
const memberPrefixes: Map<string, readonly [string, string]>[] = [];
const MEMBER_PREFIX_CACHE_LIMIT = 4096;
function memberPrefix(depth: number, key: string, first: boolean): string {
  let byKey = memberPrefixes[depth];
  if (byKey === undefined) {
    byKey = new Map();
    memberPrefixes[depth] = byKey;
  }
  let prefixes = byKey.get(key);
  if (prefixes === undefined) {
    const start = lineStart(depth) + JSON.stringify(key) + " : ";
    prefixes = ["{" + start, "," + start];
    if (byKey.size < MEMBER_PREFIX_CACHE_LIMIT) byKey.set(key, prefixes);
  }
  return first ? prefixes[0] : prefixes[1];
}

/**
 * Where the bytes go when writing bytes: the text is turned into UTF-8 in chunks, so that a few
 * non-ASCII characters do not make the whole document a two-byte string.
 */
let byteChunks: Buffer[] | undefined;
const FLUSH_PARTS = 2048;
function flush(out: string[]): void {
  if (byteChunks === undefined) return;
  byteChunks.push(Buffer.from(out.join(""), "utf8"));
  out.length = 0;
}

/** What the walk refused: a value, described; the path is the tracking walk's. */
class Refused {
  constructor(readonly what: string) {}
}

/**
 * Set while a refused value is written again to find it: the path of the value being written
 * and, for each container being written, the length of the path at it (to name a cycle).
 */
interface Tracking {
  readonly path: (string | number)[];
  readonly ancestors: Map<object, number>;
}
let tracking: Tracking | undefined;

function sortKeys(keys: string[]): string[] {
  const length = keys.length;
  if (length > 12) return keys.sort();
  for (let index = 1; index < length; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    while (at >= 0 && (keys[at] as string) > key) {
      keys[at + 1] = keys[at] as string;
      at--;
    }
    keys[at + 1] = key;
  }
  return keys;
}

function writeArray(array: readonly unknown[], depth: number, out: string[]): void {
  const length = array.length;
  if (length === 0) {
    out.push("[]");
    return;
  }
  const start = lineStart(depth + 1);
  for (let index = 0; index < length; index++) {
    const item = array[index];
    const prefix = index === 0 ? "[" + start : "," + start;
    if (typeof item === "string") out.push(prefix, JSON.stringify(item));
    else {
      if (tracking !== undefined) tracking.path.push(index);
      if (item === undefined) throw new Refused("undefined");
      out.push(prefix);
      writeValue(item, depth + 1, out);
      if (tracking !== undefined) tracking.path.pop();
    }
    if (out.length > FLUSH_PARTS) flush(out);
  }
  out.push(lineStart(depth), "]");
}

function writeMember(
  first: boolean,
  key: string,
  member: unknown,
  depth: number,
  out: string[],
): void {
  const prefix = memberPrefix(depth + 1, key, first);
  if (typeof member === "string") out.push(prefix, JSON.stringify(member));
  else {
    if (tracking !== undefined) tracking.path.push(key);
    out.push(prefix);
    writeValue(member, depth + 1, out);
    if (tracking !== undefined) tracking.path.pop();
  }
}

function writeRecord(record: Record<string, unknown>, depth: number, out: string[]): void {
  const keys = sortKeys(Object.keys(record));
  let written = 0;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const member = record[key];
    if (member === undefined) continue;
    writeMember(written === 0, key, member, depth, out);
    written++;
  }
  if (written === 0) out.push("{}");
  else out.push(lineStart(depth), "}");
}

function writeMap(map: Map<unknown, unknown>, depth: number, out: string[]): void {
  const keys: string[] = [];
  for (const key of map.keys()) {
    if (typeof key !== "string") throw new Refused("a Map key that is not a string");
    keys.push(key);
  }
  sortKeys(keys);
  let written = 0;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const member = map.get(key);
    if (member === undefined) continue;
    writeMember(written === 0, key, member, depth, out);
    written++;
  }
  if (written === 0) out.push("{}");
  else out.push(lineStart(depth), "}");
}

function writeValue(value: unknown, depth: number, out: string[]): void {
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "number":
      if (!Number.isFinite(value)) throw new Refused(String(value));
      out.push(String(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "object": {
      if (value === null) {
        out.push("null");
        return;
      }
      if (tracking === undefined) {
        writeObject(value, depth, out);
        return;
      }
      const earlier = tracking.ancestors.get(value);
      if (earlier !== undefined) {
        const at = formatJsonPath(tracking.path.slice(0, earlier));
        throw new Refused(`a cycle (this value is also at ${at})`);
      }
      tracking.ancestors.set(value, tracking.path.length);
      writeObject(value, depth, out);
      tracking.ancestors.delete(value);
      return;
    }
    default:
      throw new Refused(typeof value);
  }
}

function writeObject(value: object, depth: number, out: string[]): void {
  if (depth > MAX_JSON_DEPTH) throw new Refused(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    writeArray(value, depth, out);
    return;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    writeRecord(value as Record<string, unknown>, depth, out);
    return;
  }
  if (value instanceof Map) {
    writeMap(value as Map<unknown, unknown>, depth, out);
    return;
  }
  if (value instanceof CanonicalFragment) {
    if (value.depth !== depth) throw new Refused("a fragment written at another depth");
    out.push(value.text);
    return;
  }
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  throw new Refused(`an instance of ${name ?? "an unknown class"}`);
}

/**
 * The error for a value the writer refused: the value is written again, tracking, to find the
 * first refused value in the writer's order and its JSON path.
 */
function refusal(value: unknown, depth: number): VerbatimError {
  const walk: Tracking = { path: [], ancestors: new Map() };
  tracking = walk;
  let problem = { what: "a value", where: "$" };
  try {
    writeValue(value, depth, []);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    problem = { what: error.what, where: formatJsonPath(walk.path) };
  } finally {
    tracking = undefined;
  }
  return new VerbatimError(
    "non_canonical_value",
    `${problem.what} cannot be written as canonical JSON`,
    {
      where: problem.where,
      hint: "Pass only finite numbers, strings, booleans, null, arrays, plain objects and Maps",
    },
  );
}

/** Writes `value` onto `out`; with `chunks`, full stretches of text go there as UTF-8. */
function write(value: unknown, depth: number, out: string[], chunks?: Buffer[]): void {
  // A getter may write another value while this one is written: each write has its own.
  const outer = byteChunks;
  const outerTracking = tracking;
  byteChunks = chunks;
  tracking = undefined;
  try {
    writeValue(value, depth, out);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    byteChunks = undefined;
    throw refusal(value, depth);
  } finally {
    byteChunks = outer;
    tracking = outerTracking;
  }
}

/** The canonical text of a value at a depth (no final LF): for fragments and for tests. */
export function canonicalJsonFragment(value: unknown, depth = 0): string {
  const out: string[] = [];
  write(value, depth, out);
  return out.join("");
}

/** The canonical text of a document: the value at depth 0 and exactly one final LF. */
export function canonicalJsonText(value: unknown): string {
  const out: string[] = [];
  write(value, 0, out);
  out.push("\n");
  return out.join("");
}

/** The canonical bytes of a document (UTF-8 of `canonicalJsonText`). */
export function canonicalJsonBytes(value: unknown): Buffer {
  const chunks: Buffer[] = [];
  const out: string[] = [];
  write(value, 0, out, chunks);
  out.push("\n");
  chunks.push(Buffer.from(out.join(""), "utf8"));
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}
