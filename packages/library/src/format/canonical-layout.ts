/**
 * Byte-level tests of the canonical writer's layout (core/canonical-json.ts, docs/format-1.md
 * "Byte rules"), used by `valueEnd` (json-bytes.ts) while it scans a value: the reader learns
 * whether a file is canonical in the pass that finds its values. They assume JSON that
 * JSON.parse accepts (the caller parses every value), and err only towards "not canonical".
 */
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const LETTER_U = 0x75;

/** `indentEnd` found no line start of the level asked for. */
export const NOT_INDENTED = -1;

/**
 * The index after `"\n"` and two spaces per level at `index` (exactly that many: a further
 * space is not canonical), or NOT_INDENTED.
 */
export function indentEnd(bytes: Buffer, index: number, level: number): number {
  if (bytes[index] !== NEWLINE) return NOT_INDENTED;
  const stop = index + 1 + 2 * level;
  let at = index + 1;
  while (at < stop && bytes[at] === SPACE) at++;
  if (at !== stop || bytes[at] === SPACE) return NOT_INDENTED;
  return at;
}

export function startsNumber(byte: number): boolean {
  return byte === 0x2d || (byte >= 0x30 && byte <= 0x39);
}

/** The index after the number token at `start` (digits, `.`, `e`, `E`, `+`, `-`). */
export function numberEnd(bytes: Buffer, start: number): number {
  let index = start;
  for (;;) {
    const byte = bytes[index];
    if (byte === undefined) return index;
    if (!(startsNumber(byte) || byte === 0x2e || byte === 0x65 || byte === 0x45 || byte === 0x2b)) {
      return index;
    }
    index++;
  }
}

/** A number is canonical as ECMAScript prints it (`1`, not `1.0`, `1e0` or `-0`). */
export function canonicalNumber(bytes: Buffer, start: number, end: number): boolean {
  const text = bytes.toString("latin1", start, end);
  return String(Number(text)) === text;
}

/**
 * Where the next backslash is, at or after a position already passed, in the bytes last
 * scanned: kept from one string to the next so that the search for it is made once per
 * backslash, not once per string.
 */
export interface BackslashCursor {
  bytes: Buffer | undefined;
  next: number;
}

export function newBackslashCursor(): BackslashCursor {
  return { bytes: undefined, next: -1 };
}

/** Four lower-case hex digits at `index` as a number, or -1. */
function lowerHex(bytes: Buffer, index: number): number {
  let code = 0;
  for (let at = index; at < index + 4; at++) {
    const byte = bytes[at] ?? 0;
    const digit =
      byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : byte >= 0x61 && byte <= 0x66 ? byte - 0x57 : -1;
    if (digit < 0) return -1;
    code = code * 16 + digit;
  }
  return code;
}

/** Characters JSON.stringify writes with a short escape: \b \t \n \f \r. */
function hasShortEscape(code: number): boolean {
  return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}

/**
 * Whether the `\u` escape at `index` is one JSON.stringify writes: lower-case hex, for a
 * control character without a short form or a lone surrogate (a pair is written as itself).
 */
function canonicalUnicodeEscape(bytes: Buffer, index: number): boolean {
  const code = lowerHex(bytes, index + 2);
  if (code < 0) return false;
  if (code < 0x20) return !hasShortEscape(code);
  if (code >= 0xdc00 && code <= 0xdfff) return true;
  if (code < 0xd800 || code > 0xdbff) return false;
  const next =
    bytes[index + 6] === BACKSLASH && bytes[index + 7] === LETTER_U
      ? lowerHex(bytes, index + 8)
      : -1;
  return !(next >= 0xdc00 && next <= 0xdfff);
}

/**
 * Whether the string from the quote at `start` to `end` (after its closing quote) is escaped as
 * JSON.stringify escapes it. Characters that must be escaped cannot appear raw in text
 * JSON.parse accepts (nor lone surrogates in valid UTF-8), so only the escapes are looked at.
 */
export function canonicalEscapes(
  bytes: Buffer,
  start: number,
  end: number,
  cursor: BackslashCursor,
): boolean {
  let at = cursor.bytes === bytes && cursor.next >= start ? cursor.next : -1;
  if (at < 0) {
    at = bytes.indexOf(BACKSLASH, start);
    if (at < 0) at = bytes.length;
  }
  const quote = end - 1;
  let canonical = true;
  while (at < quote) {
    const escaped = bytes[at + 1];
    let size = 2;
    if (escaped === LETTER_U) {
      canonical = canonicalUnicodeEscape(bytes, at);
      size = 6;
    } else {
      // \" \\ \b \f \n \r \t; not \/.
      canonical =
        escaped === 0x22 ||
        escaped === BACKSLASH ||
        escaped === 0x62 ||
        escaped === 0x66 ||
        escaped === 0x6e ||
        escaped === 0x72 ||
        escaped === 0x74;
    }
    if (!canonical) break;
    at = bytes.indexOf(BACKSLASH, at + size);
    if (at < 0) at = bytes.length;
  }
  cursor.bytes = bytes;
  cursor.next = canonical ? at : -1;
  return canonical;
}
