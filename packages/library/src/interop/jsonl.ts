import { MAX_JSON_DEPTH, nestsTooDeep } from "../core/json-depth.js";
import { recordOf, type JsonRecord } from "./json-access.js";
import { LineSample } from "./line-sample.js";

/** One JSON object line of a source file, with its 1-based line number. */
export interface SourceLine {
  readonly line: number;
  readonly value: JsonRecord;
}

/** The lines left out for one reason: counted, with the first few line numbers. */
export interface UnreadableLines {
  readonly reason: string;
  readonly count: number;
  /** The first lines (1-based), at most LEFT_OUT_SAMPLE_LINES. */
  readonly lines: readonly number[];
}

export interface JsonLines {
  readonly lines: readonly SourceLine[];
  /** Lines that are not a JSON object: reported, never dropped silently. */
  readonly unreadable: readonly UnreadableLines[];
  /** Non-blank lines in the file. */
  readonly total: number;
}

const NOT_JSON = "not JSON: the line is kept in the source only";
const NOT_OBJECT = "not a JSON object";
/** Why a line or file is left out when it nests deeper than nestsTooDeep allows. */
export const NESTED_TOO_DEEP = `nested deeper than ${MAX_JSON_DEPTH} arrays and objects (the limit of verbatim's JSON reader and HTTP API): it is kept in the source only`;

/** The smallest line that can nest deeper than the limit (an opening and a closing bracket each). */
const SHORTEST_TOO_DEEP = 2 * (MAX_JSON_DEPTH + 1);

/**
 * Splits JSON Lines text. `JSON.parse` is prototype-safe (a `__proto__` key becomes an own
 * data property) and the helpers of json-access.ts read only own fields; a line that is not a
 * JSON object, or nests too deep for the code after it, is reported by count and first lines
 * (memory stays bounded however many junk lines a file has).
 */
export function readJsonLines(text: string): JsonLines {
  const lines: SourceLine[] = [];
  const unreadable = new Map<string, LineSample>();
  const leaveOut = (line: number, reason: string): void => {
    let sample = unreadable.get(reason);
    if (sample === undefined) {
      sample = new LineSample();
      unreadable.set(reason, sample);
    }
    sample.add(line);
  };
  let total = 0;
  let start = 0;
  let number = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    number++;
    const raw = text.slice(start, end);
    start = end + 1;
    const trimmed = raw.trim();
    if (trimmed === "") continue;
    total++;
    // Only a line starting with `{` can be an object: junk is not thrown through JSON.parse.
    if (!trimmed.startsWith("{")) {
      leaveOut(number, isJson(trimmed) ? NOT_OBJECT : NOT_JSON);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      leaveOut(number, NOT_JSON);
      continue;
    }
    const value = recordOf(parsed);
    if (value === undefined) leaveOut(number, NOT_OBJECT);
    else if (raw.length >= SHORTEST_TOO_DEEP && nestsTooDeep(value))
      leaveOut(number, NESTED_TOO_DEEP);
    else lines.push({ line: number, value });
  }
  return {
    lines,
    unreadable: [...unreadable].map(([reason, sample]) => ({
      reason,
      count: sample.count,
      lines: sample.lines,
    })),
    total,
  };
}

/** What a JSON text can start with: `[`, `"`, `-`, a digit, or true, false, null. */
const JSON_START = /^[[\-"0-9tfn]/;

/** Whether a line that is not an object is JSON at all (a cheap test first: most junk is not). */
function isJson(trimmed: string): boolean {
  if (!JSON_START.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
