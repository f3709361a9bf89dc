/**
 * Structural scanning of JSON bytes, for reading a large `conversation.json` one value at a
 * time without turning the whole file into one string. These functions find where a value ends
 * (strings, brackets) and whether it is laid out canonically; they do not check that it is
 * JSON: the caller parses each value's slice with JSON.parse, which refuses anything malformed.
 */
import {
  NOT_INDENTED,
  canonicalEscapes,
  canonicalNumber,
  indentEnd,
  newBackslashCursor,
  numberEnd,
  startsNumber,
  type BackslashCursor,
} from "./canonical-layout.js";

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const NEWLINE = 0x0a;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** More bytes are needed to find the end. */
export const NEED_MORE = -1;

export function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * The index after the closing quote of the string whose opening quote is at `start`, or
 * NEED_MORE. A quote ends the string unless an odd number of backslashes precede it.
 */
export function stringEnd(bytes: Buffer, start: number): number {
  let quote = bytes.indexOf(QUOTE, start + 1);
  for (;;) {
    if (quote === -1) return NEED_MORE;
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return quote + 1;
    quote = bytes.indexOf(QUOTE, quote + 1);
  }
}

/**
 * Where a value ends, the `:` written inside it outside strings (its object members), and
 * whether it is laid out as the canonical writer lays it out (docs/format-1.md, "Byte rules";
 * canonical-layout.ts). Reused from one value to the next: it also keeps where the next
 * backslash is, so that values without one do not each search the rest of the bytes.
 */
export interface ValueEnd {
  end: number;
  members: number;
  canonical: boolean;
  readonly backslash: BackslashCursor;
}

export function newValueEnd(): ValueEnd {
  return { end: 0, members: 0, canonical: true, backslash: newBackslashCursor() };
}

/**
 * The end of the JSON value starting at `start` (a non-whitespace byte): after its closing
 * bracket or quote, or, for a number or literal, at the next whitespace, `,`, `]` or `}`.
 * Sets `found.end` to NEED_MORE when the value runs past the bytes given. On the way it checks
 * the canonical layout of a value written at nesting `level` of its document (whitespace,
 * string escapes, number spellings; key order is checked on the parsed value), so that reading
 * a file also tells whether it is canonical without walking it again.
 */
export function valueEnd(bytes: Buffer, start: number, found: ValueEnd, level = 0): void {
  found.members = 0;
  found.canonical = true;
  const first = bytes[start] as number;
  if (first === QUOTE) {
    found.end = stringEnd(bytes, start);
    if (found.end !== NEED_MORE) {
      found.canonical = canonicalEscapes(bytes, start, found.end, found.backslash);
    }
    return;
  }
  const length = bytes.length;
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let index = start;
    for (; index < length; index++) {
      const byte = bytes[index];
      if (
        byte === COMMA ||
        byte === CLOSE_BRACKET ||
        byte === CLOSE_BRACE ||
        isJsonWhitespace(byte)
      ) {
        break;
      }
    }
    found.end = index < length ? index : NEED_MORE;
    if (found.end !== NEED_MORE && startsNumber(first)) {
      found.canonical = canonicalNumber(bytes, start, index);
    }
    return;
  }
  let depth = 0;
  let members = 0;
  let canonical = true;
  /** Where a closing bracket may follow the line that precedes it. */
  let lined = -1;
  let index = start;
  while (index < length) {
    const byte = bytes[index] as number;
    if (byte === QUOTE) {
      const end = stringEnd(bytes, index);
      if (end === NEED_MORE) break;
      if (canonical) canonical = canonicalEscapes(bytes, index, end, found.backslash);
      index = end;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      index++;
      // `{}` and `[]` (each closing bracket is two above its opening one); otherwise a line.
      if (bytes[index] === byte + 2) continue;
      const after = indentEnd(bytes, index, level + depth);
      if (after === NOT_INDENTED) canonical = false;
      else index = after;
      continue;
    }
    if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      if (index !== lined && bytes[index - 1] !== byte - 2) canonical = false;
      depth--;
      if (depth === 0) {
        found.end = index + 1;
        found.members = members;
        found.canonical = canonical;
        return;
      }
      index++;
      continue;
    }
    if (byte === COMMA) {
      index++;
      const after = indentEnd(bytes, index, level + depth);
      if (after === NOT_INDENTED) canonical = false;
      else index = after;
      continue;
    }
    if (byte === COLON) {
      members++;
      // `"key" : value`: the space before was let through below.
      if (bytes[index - 1] !== SPACE || bytes[index - 2] !== QUOTE || bytes[index + 1] !== SPACE) {
        canonical = false;
      } else index++;
      index++;
      continue;
    }
    if (byte === SPACE) {
      if (bytes[index + 1] !== COLON) canonical = false;
      index++;
      continue;
    }
    if (byte === NEWLINE) {
      // Only before a closing bracket, on a line of the container's own level.
      const after = indentEnd(bytes, index, level + depth - 1);
      const next = after === NOT_INDENTED ? undefined : bytes[after];
      if (next === CLOSE_BRACE || next === CLOSE_BRACKET) {
        lined = after;
        index = after;
      } else {
        canonical = false;
        index++;
      }
      continue;
    }
    if (startsNumber(byte)) {
      const end = numberEnd(bytes, index);
      if (end >= length) break;
      if (canonical) canonical = canonicalNumber(bytes, index, end);
      index = end;
      continue;
    }
    // Tabs and carriage returns are never canonical; letters of literals are.
    if (isJsonWhitespace(byte)) canonical = false;
    index++;
  }
  found.end = NEED_MORE;
}
