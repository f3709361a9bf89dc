/**
 * Structural scanning of JSON bytes, for reading a large `conversation.json` one value at a
 * time without turning the whole file into one string. These functions only find where a value
 * ends (strings, brackets); they do not check it: the caller parses each value's slice with
 * JSON.parse, which refuses anything malformed.
 */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
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

/** Where a value ends, and the `:` written inside it outside strings (its object members). */
export interface ValueEnd {
  end: number;
  members: number;
}

/**
 * The end of the JSON value starting at `start` (a non-whitespace byte): after its closing
 * bracket or quote, or, for a number or literal, at the next whitespace, `,`, `]` or `}`.
 * Sets `found.end` to NEED_MORE when the value runs past the bytes given.
 */
export function valueEnd(bytes: Buffer, start: number, found: ValueEnd): void {
  found.members = 0;
  const first = bytes[start];
  if (first === QUOTE) {
    found.end = stringEnd(bytes, start);
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
    return;
  }
  let depth = 0;
  let members = 0;
  let index = start;
  while (index < length) {
    const byte = bytes[index] as number;
    if (byte === QUOTE) {
      index = stringEnd(bytes, index);
      if (index === NEED_MORE) break;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) {
        found.end = index + 1;
        found.members = members;
        return;
      }
    } else if (byte === COLON) members++;
    index++;
  }
  found.end = NEED_MORE;
}
