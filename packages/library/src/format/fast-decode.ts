import { MAX_JSON_DEPTH } from "../core/json-depth.js";

/**
 * JSON.parse of a value of a `conversation.json` (the element-wise decoder, element-decode.ts,
 * parses each element and member this way, the quick decoder, quick-decode.ts, the whole file)
 * followed by the checks that make its result the same as the strict parser's
 * (core/strict-json.ts) for a decoder that copies every value through the schema:
 * - no key repeated inside one object: the members written in the text (each `:` outside
 *   strings, counted by the caller while it finds the value's end, json-bytes.ts) must equal
 *   the keys JSON.parse kept;
 * - every number finite (JSON.parse turns `1e400` into Infinity);
 * - nesting no deeper than the strict parser's limit (MAX_JSON_DEPTH).
 * When any check fails, the caller runs the strict path, which gives the precise reason.
 *
 * The fast twin of the strict parser: several times faster (`node bin/run-ts.js
 * bench/canonical-json/run.ts --rounds 5`, the rows JSON.parse and strict parser alone).
 * fast-decode.test.ts holds the two to the same values on generated JSON, and the decoders' case
 * table (test/support/decoder-cases.ts) to the same verdicts.
 */

/**
 * Set by `keysInValue` when an object's keys are not in the canonical writer's order (sorted by
 * UTF-16 code units), or may not be in the order written: the engine lists keys that are array
 * indices ("7") first, so an object with one is counted as out of order.
 */
let keysOutOfOrder = false;
const ARRAY_INDEX = /^[0-9]+$/;

/** Keys kept by JSON.parse, or -1 when a number is not finite or nesting is too deep. */
function keysInValue(value: unknown, depth: number): number {
  if (typeof value === "number") return Number.isFinite(value) ? 0 : -1;
  if (typeof value !== "object" || value === null) return 0;
  if (depth >= MAX_JSON_DEPTH) return -1;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const element of value) {
      const inner = keysInValue(element, depth + 1);
      if (inner < 0) return -1;
      keys += inner;
    }
    return keys;
  }
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key of Object.keys(record)) {
    if (previous !== undefined && !(previous < key)) keysOutOfOrder = true;
    const code = key.charCodeAt(0);
    if (code >= 0x30 && code <= 0x39 && ARRAY_INDEX.test(key)) keysOutOfOrder = true;
    previous = key;
    const inner = keysInValue(record[key], depth + 1);
    if (inner < 0) return -1;
    keys += inner + 1;
  }
  return keys;
}

/**
 * A value parsed by `checkedJsonParse`; `keysInOrder`: every object's keys were written in the
 * canonical writer's order (what the text's layout cannot show, docs/format-1.md "Byte rules").
 */
export interface CheckedValue {
  readonly value: unknown;
  readonly keysInOrder: boolean;
}

/**
 * JSON.parse of a value found at nesting `depth` of a document, with the checks above;
 * `members` is the number of members written in `text` (its `:` outside strings), counted by
 * the caller. Undefined sends the caller to the strict path.
 */
export function checkedJsonParse(
  text: string,
  depth: number,
  members: number,
): CheckedValue | undefined {
  if (members < 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  keysOutOfOrder = false;
  const keys = keysInValue(value, depth);
  if (keys < 0 || keys !== members) return undefined;
  return { value, keysInOrder: !keysOutOfOrder };
}
