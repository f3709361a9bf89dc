import { Buffer, isUtf8 } from "node:buffer";
import { VerbatimError } from "./errors.js";
import { MAX_JSON_DEPTH } from "./json-depth.js";

/**
 * A strict, prototype-safe JSON parser for untrusted input (RFC 8259):
 * - objects come back with a null prototype, so `__proto__` and `constructor` are plain keys;
 * - a key repeated inside one object is an error (JSON.parse silently keeps the last);
 * - errors name the line, the column and the JSON path of the problem;
 * - a byte order mark, comments, trailing commas and NaN are errors;
 * - a number too large for a 64-bit float (e.g. `1e400`) is an error, not Infinity;
 * - nesting deeper than MAX_JSON_DEPTH (1000) arrays and objects is an error (no stack
 *   overflow).
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export interface JsonSyntaxProblem {
  readonly message: string;
  readonly line: number;
  readonly column: number;
  /** JSON path of the value being read when the problem was found, e.g. `$.history[2]`. */
  readonly path: string;
}

export type StrictParseResult =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: JsonSyntaxProblem };

/** A string without escapes (the common case: sliced, not unescaped). */
const PLAIN_STRING = /"[^"\\\u0000-\u001f]*"/y;
const STRING = /"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Problem {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

/** An open array or object: the container being filled and, in an object, the member's key. */
interface Frame {
  readonly array: JsonValue[] | undefined;
  readonly object: JsonObject | undefined;
  key: string;
}

const VALUE = 0;
const KEY = 1;

class Parser {
  index = 0;
  readonly path: (string | number)[] = [];
  readonly frames: Frame[] = [];
  state: typeof VALUE | typeof KEY = VALUE;
  result: JsonValue = null;

  constructor(readonly text: string) {}

  fail(message: string, offset = this.index): never {
    throw new Problem(message, offset);
  }

  skipWhitespace(): void {
    const text = this.text;
    let index = this.index;
    for (;;) {
      const code = text.charCodeAt(index);
      if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) index++;
      else break;
    }
    this.index = index;
  }

  describeHere(): string {
    if (this.index >= this.text.length) return "the end of the input";
    return JSON.stringify(this.text.slice(this.index, this.index + 12));
  }

  parseString(): string {
    const start = this.index;
    PLAIN_STRING.lastIndex = start;
    if (PLAIN_STRING.test(this.text)) {
      this.index = PLAIN_STRING.lastIndex;
      return this.text.slice(start + 1, this.index - 1);
    }
    STRING.lastIndex = start;
    if (!STRING.test(this.text)) this.fail(this.explainBadString());
    this.index = STRING.lastIndex;
    return JSON.parse(this.text.slice(start, this.index)) as string;
  }

  explainBadString(): string {
    const text = this.text;
    for (let index = this.index + 1; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code === 0x22) break;
      if (code < 0x20) {
        return `a control character U+${code.toString(16).padStart(4, "0")} must be escaped inside a string`;
      }
      if (code === 0x5c) {
        const next = text[index + 1] ?? "";
        if (next === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6))) {
            return "a \\u escape needs four hex digits";
          }
          index += 5;
        } else if ('"\\/bfnrt'.includes(next) && next !== "") {
          index++;
        } else {
          return `\\${next} is not a JSON escape`;
        }
      }
    }
    return "a string is not closed";
  }

  /** A number, string or literal at the current index (not an array or object). */
  parseScalar(code: number): JsonValue {
    switch (code) {
      case 0x22:
        return this.parseString();
      case 0x74:
        return this.parseLiteral("true", true);
      case 0x66:
        return this.parseLiteral("false", false);
      case 0x6e:
        return this.parseLiteral("null", null);
      default: {
        NUMBER.lastIndex = this.index;
        const match = NUMBER.exec(this.text);
        if (match === null) this.fail(`expected a JSON value, found ${this.describeHere()}`);
        const number = Number(match[0]);
        if (!Number.isFinite(number)) {
          this.fail(`the number ${match[0]} is too large for a 64-bit floating-point number`);
        }
        this.index = NUMBER.lastIndex;
        return number;
      }
    }
  }

  parseLiteral<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.index)) {
      this.fail(`expected a JSON value, found ${this.describeHere()}`);
    }
    this.index += word.length;
    return value;
  }

  describeBefore(): string {
    this.index--;
    const description = this.describeHere();
    this.index++;
    return description;
  }

  /**
   * Reads on until the value is complete (true) or the index has passed `pauseAt` at the start
   * of a value (false: call again to go on). Iterative, with the open arrays and objects on an
   * explicit stack, so that a long parse can stop between values and depth costs no call stack.
   */
  run(pauseAt: number): boolean {
    const text = this.text;
    const frames = this.frames;
    let state = this.state;
    for (;;) {
      if (state === VALUE) {
        if (this.index >= pauseAt) {
          this.state = state;
          return false;
        }
        this.skipWhitespace();
        const code = text.charCodeAt(this.index);
        let value: JsonValue;
        if (code === 0x5b || code === 0x7b) {
          if (frames.length >= MAX_JSON_DEPTH) {
            this.fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
          }
          this.index++;
          this.skipWhitespace();
          const array = code === 0x5b;
          if (text.charCodeAt(this.index) !== (array ? 0x5d : 0x7d)) {
            if (array) {
              frames.push({ array: [], object: undefined, key: "" });
              this.path.push(0);
              continue;
            }
            frames.push({ array: undefined, object: Object.create(null) as JsonObject, key: "" });
            state = KEY;
            continue;
          }
          this.index++;
          value = array ? [] : (Object.create(null) as JsonObject);
        } else {
          value = this.parseScalar(code);
        }
        // The value is complete: it goes into the innermost open container, closing as many
        // containers as end here.
        for (;;) {
          const frame = frames[frames.length - 1];
          if (frame === undefined) {
            this.result = value;
            return true;
          }
          if (frame.array !== undefined) frame.array.push(value);
          else (frame.object as JsonObject)[frame.key] = value;
          this.path.pop();
          this.skipWhitespace();
          const next = text.charCodeAt(this.index);
          this.index++;
          if (next === 0x2c) {
            if (frame.array !== undefined) {
              this.path.push(frame.array.length);
              state = VALUE;
            } else {
              state = KEY;
            }
            break;
          }
          if (next === (frame.array !== undefined ? 0x5d : 0x7d)) {
            frames.pop();
            value = frame.array ?? (frame.object as JsonObject);
            continue;
          }
          this.fail(
            frame.array !== undefined
              ? `expected "," or "]" after an array element, found ${this.describeBefore()}`
              : `expected "," or "}" after an object member, found ${this.describeBefore()}`,
            this.index - 1,
          );
        }
        continue;
      }
      // KEY: a member's key and its colon; the member's value follows.
      const frame = frames[frames.length - 1] as Frame;
      const object = frame.object as JsonObject;
      this.skipWhitespace();
      if (text.charCodeAt(this.index) !== 0x22) {
        this.fail(`expected a quoted key, found ${this.describeHere()}`);
      }
      const keyOffset = this.index;
      const key = this.parseString();
      // A null-prototype object and no undefined in JSON: a defined member is a repeated key.
      if (object[key] !== undefined) {
        this.fail(`the key ${JSON.stringify(key)} appears twice in one object`, keyOffset);
      }
      this.skipWhitespace();
      if (text.charCodeAt(this.index) !== 0x3a) {
        this.fail(
          `expected ":" after the key ${JSON.stringify(key)}, found ${this.describeHere()}`,
        );
      }
      this.index++;
      frame.key = key;
      this.path.push(key);
      state = VALUE;
    }
  }

  /** The parse's outcome once `run` returned true, or its problem (never throws for bad input). */
  finish(): StrictParseResult {
    this.skipWhitespace();
    if (this.index < this.text.length) {
      return this.problem(
        new Problem(`unexpected ${this.describeHere()} after the JSON value`, this.index),
      );
    }
    return { ok: true, value: this.result };
  }

  problem(error: unknown): StrictParseResult {
    if (!(error instanceof Problem)) throw error;
    const position = lineAndColumn(this.text, error.offset);
    return {
      ok: false,
      problem: { message: error.message, ...position, path: formatJsonPath(this.path) },
    };
  }
}

export function formatJsonPath(path: readonly (string | number)[]): string {
  let out = "$";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (
    let index = text.indexOf("\n");
    index !== -1 && index < offset;
    index = text.indexOf("\n", index + 1)
  ) {
    line++;
    lineStart = index + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** Parses JSON text strictly; never throws for bad input. */
export function safeParseStrictJson(text: string): StrictParseResult {
  const parser = new Parser(text);
  try {
    parser.run(Infinity);
    return parser.finish();
  } catch (error) {
    return parser.problem(error);
  }
}

/**
 * `safeParseStrictJson` for large text on a thread that serves others (the HTTP server): reads
 * about `sliceChars` characters at a time and awaits `pause()` between slices, so that no slice
 * holds the thread long. The same result, value or problem, as the one-pass parse.
 */
export async function safeParseStrictJsonInSlices(
  text: string,
  pause: () => Promise<void>,
  sliceChars = 256 * 1024,
): Promise<StrictParseResult> {
  const parser = new Parser(text);
  try {
    while (!parser.run(parser.index + sliceChars)) await pause();
    return parser.finish();
  } catch (error) {
    return parser.problem(error);
  }
}

/** Parses JSON text strictly; throws `invalid_json` with line, column and path. */
export function parseStrictJson(text: string, source = "input"): JsonValue {
  const result = safeParseStrictJson(text);
  if (result.ok) return result.value;
  const { problem } = result;
  throw new VerbatimError("invalid_json", `${source} is not valid JSON: ${problem.message}`, {
    where: `line ${problem.line}, column ${problem.column}, ${problem.path}`,
    hint: "Fix the JSON at that position",
  });
}

/** Bytes → text for JSON: strict UTF-8, no byte order mark. */
export function decodeJsonBytes(
  bytes: Uint8Array,
): { ok: true; text: string } | { ok: false; message: string } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return {
      ok: false,
      message: "the file starts with a byte order mark, which JSON does not allow",
    };
  }
  // buffer.isUtf8 and Buffer#toString are many times faster than a fatal TextDecoder on large
  // non-ASCII files; the result is the same.
  if (!isUtf8(bytes)) return { ok: false, message: "the file is not valid UTF-8" };
  return {
    ok: true,
    text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"),
  };
}
