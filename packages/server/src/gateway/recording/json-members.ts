/** Reading members of parsed JSON of unknown shape (recorded requests and answers). */
export type Json = Record<string, unknown>;

/** The value as an object of members, or undefined (arrays and null are not). */
export const record = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;

/** The value if it is text, else "". */
export const text = (value: unknown): string => (typeof value === "string" ? value : "");

// Where members and elements lie in the bytes of JSON a strict parse has read already (so the
// bytes are known to be JSON: these only find where things end, they check nothing).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The offset of the first byte at or after `at` that is not JSON whitespace. */
export function skipWhitespace(bytes: Uint8Array, at: number): number {
  let index = at;
  while (isWhitespace(bytes[index])) index++;
  return index;
}

/** The offset just past the string whose opening quote is at `at`. */
function stringEnd(bytes: Buffer, at: number): number {
  let index = at + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, index);
    if (quote < 0) return bytes.length;
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}

/** The offset just past the value that starts at `at`. */
export function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  if (first !== 0x7b && first !== 0x5b) {
    let index = at;
    for (;;) {
      const byte = bytes[index];
      if (byte === undefined || byte === 0x2c || byte === 0x7d || byte === 0x5d) return index;
      if (isWhitespace(byte)) return index;
      index++;
    }
  }
  let depth = 0;
  let index = at;
  while (index < bytes.length) {
    const byte = bytes[index] as number;
    if (byte === QUOTE) {
      index = stringEnd(bytes, index);
      continue;
    }
    if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) {
      depth--;
      if (depth === 0) return index + 1;
    }
    index++;
  }
  return index;
}

/**
 * The offsets just past each element of the array whose `[` (or the comma before the
 * elements wanted) is at `open`, up to its `]`.
 */
export function elementEnds(bytes: Buffer, open: number): number[] {
  const ends: number[] = [];
  let index = skipWhitespace(bytes, open + 1);
  if (bytes[index] === 0x5d) return ends;
  while (index < bytes.length) {
    const end = valueEnd(bytes, index);
    ends.push(end);
    index = skipWhitespace(bytes, end);
    if (bytes[index] !== 0x2c) break;
    index = skipWhitespace(bytes, index + 1);
  }
  return ends;
}

/**
 * The names of the members of the object the bytes hold before the member `name`, and where
 * that member's value starts; undefined when the bytes are not an object or have no `name`.
 */
export function membersBefore(
  bytes: Buffer,
  name: string,
): { names: string[]; valueStart: number } | undefined {
  let index = skipWhitespace(bytes, 0);
  if (bytes[index] !== 0x7b) return undefined;
  const names: string[] = [];
  index = skipWhitespace(bytes, index + 1);
  while (bytes[index] === QUOTE) {
    const keyEnd = stringEnd(bytes, index);
    const key = JSON.parse(bytes.toString("utf8", index, keyEnd)) as string;
    index = skipWhitespace(bytes, skipWhitespace(bytes, keyEnd) + 1);
    if (key === name) return { names, valueStart: index };
    names.push(key);
    index = skipWhitespace(bytes, valueEnd(bytes, index));
    if (bytes[index] !== 0x2c) return undefined;
    index = skipWhitespace(bytes, index + 1);
  }
  return undefined;
}
