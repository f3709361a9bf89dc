/**
 * The compact JSON writer of request bodies. Objects are written in the order their keys were
 * created (renderers build them field by field, never by spreading caller objects), and a
 * `RawJson` value is spliced in as it is: this is how tool-call arguments that are already a
 * JSON object travel as their stored bytes. Caller-supplied JSON (tool schemas, extras) goes
 * through `sortedJson`, whose bytes do not depend on how the caller built the object.
 */
import type { JsonValue } from "../../core/strict-json.js";

/** JSON text spliced into the output unchanged. The text must be one valid JSON value. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type WireValue =
  | string
  | number
  | boolean
  | null
  | RawJson
  | readonly WireValue[]
  | { readonly [key: string]: WireValue | undefined };

export function writeJson(value: WireValue): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${value} cannot be written as JSON`);
      return String(value);
    case "boolean":
      return value ? "true" : "false";
    default:
      break;
  }
  if (value === null) return "null";
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) {
    const items = value as readonly WireValue[];
    let out = "[";
    for (let index = 0; index < items.length; index++) {
      if (index > 0) out += ",";
      out += writeJson(items[index] as WireValue);
    }
    return out + "]";
  }
  const record = value as { readonly [key: string]: WireValue | undefined };
  let out = "{";
  let first = true;
  for (const key in record) {
    const member = record[key];
    if (member === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(key) + ":" + writeJson(member);
    first = false;
  }
  return out + "}";
}

/** Compact JSON with object keys sorted at every level (for caller-supplied JSON values). */
export function sortedJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return writeJson(value);
  if (Array.isArray(value)) return "[" + value.map(sortedJson).join(",") + "]";
  const keys = Object.keys(value).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const member = value[key];
    if (member === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(key) + ":" + sortedJson(member);
    first = false;
  }
  return out + "}";
}

/** A caller-supplied JSON value as a sorted raw fragment. */
export function sortedRaw(value: JsonValue): RawJson {
  return new RawJson(sortedJson(value));
}
