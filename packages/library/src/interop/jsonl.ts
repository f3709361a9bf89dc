import { recordOf, type JsonRecord } from "./json-access.js";

/** One JSON object line of a source file, with its 1-based line number. */
export interface SourceLine {
  readonly line: number;
  readonly value: JsonRecord;
}

export interface UnreadableLine {
  readonly line: number;
  readonly reason: string;
}

export interface JsonLines {
  readonly lines: readonly SourceLine[];
  /** Lines that are not a JSON object: reported, never dropped silently. */
  readonly unreadable: readonly UnreadableLine[];
  /** Non-blank lines in the file. */
  readonly total: number;
}

/**
 * Splits JSON Lines text. `JSON.parse` is prototype-safe (a `__proto__` key becomes an own
 * data property) and the helpers of json-access.ts read only own fields; a line that is not a
 * JSON object is reported with its number.
 */
export function readJsonLines(text: string): JsonLines {
  const lines: SourceLine[] = [];
  const unreadable: UnreadableLine[] = [];
  let total = 0;
  let start = 0;
  let number = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    number++;
    const raw = text.slice(start, end);
    start = end + 1;
    if (raw.trim() === "") continue;
    total++;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      unreadable.push({ line: number, reason: "not JSON: the line is kept in the source only" });
      continue;
    }
    const value = recordOf(parsed);
    if (value === undefined) {
      unreadable.push({ line: number, reason: "not a JSON object" });
    } else {
      lines.push({ line: number, value });
    }
  }
  return { lines, unreadable, total };
}
