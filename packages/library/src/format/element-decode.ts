import { Buffer, isUtf8 } from "node:buffer";
import type { SavedConversation } from "./conversation-schema.js";
import { checkedJsonParse, type CheckedValue } from "./fast-decode.js";
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  NEED_MORE,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  isJsonWhitespace,
  newValueEnd,
  stringEnd,
  valueEnd,
} from "./json-bytes.js";
import { elementCheckOf, isConversationKey, validateConversation } from "./validate.js";

/**
 * Decodes `conversation.json` one value at a time, from bytes given in chunks, so that a large
 * file is never held as one string (docs/archive.md, "Memory"). The top-level object is read
 * here; each element of its arrays (history messages, items, …) and each other member is cut
 * out of the bytes, parsed with JSON.parse (checked as in fast-decode.ts: repeated keys,
 * numbers, depth) and validated by format 1's hand-written check (validate.ts), so its parsed
 * copy is dropped at once and zod is never loaded for a file this path accepts.
 *
 * This path only ever accepts: a file it has any doubt about (not UTF-8, malformed, a repeated
 * or unknown top-level key, an element format 1 refuses, …) makes it give up, and the caller
 * decodes the whole file with the whole-file decoder (decode.ts), which gives the precise
 * reason. What it accepts, it accepts with the value the whole-file decoder gives.
 *
 * In the same pass it finds whether the bytes are exactly the canonical encoding of what it
 * returns (`canonical`): the whitespace between top-level tokens is counted here, each value's
 * layout is checked where its end is found (json-bytes.ts) and its key order where it is parsed
 * (fast-decode.ts). The check changes no value (id maps become Maps, which are written as
 * objects), so the encoding of the decoded conversation is that of the parsed text.
 *
 * A second decoder of format 1, kept for memory beside the whole-file decoder (the strict
 * parser and zod, decode.ts), which stays the definition and gives the reasons. Workload: the
 * archive opening a file larger than 8 MiB, read in 1 MiB chunks: `node bin/run-ts.js
 * bench/archive/memory.ts --megabytes 40`, the row "open" against the floor of any whole-file
 * decoder, "parse" (the file read as text and given to JSON.parse): 3.14× against 5.21× the
 * file's size above the empty process with Node's defaults, 1.83× against 3.14× as the
 * `verbatim` command, when measured. It is also faster than the whole-file decoder (0.59× to
 * 0.66× of its CPU time, `node --expose-gc bin/run-ts.js bench/archive/decoders.ts`). The three
 * decoders run the one case table test/support/decoder-cases.ts (format/decoders.test.ts),
 * this one whole and in chunks of several sizes.
 */
type Phase =
  | "start"
  | "firstKey"
  | "key"
  | "colon"
  | "value"
  | "afterValue"
  | "firstElement"
  | "element"
  | "afterElement"
  | "end"
  | "failed";

const SPACE = 0x20;
const NEWLINE = 0x0a;
/**
 * Whitespace between two tokens, as a number: spaces alone count one each; a line break
 * followed by spaces is `gapOf(level)` for two spaces per level; anything else is ODD_GAP.
 */
const LINE = 1 << 20;
const ODD_GAP = -1;
function gapOf(level: number): number {
  return LINE + 2 * level;
}

export class ConversationElementDecoder {
  private phase: Phase = "start";
  /**
   * The bytes not consumed yet (the start of a value that runs past the last chunk) followed by
   * the chunk just given, copied in: one buffer reused for the whole file, so reading allocates
   * nothing per chunk (a buffer per chunk is external memory the engine frees only when it
   * collects the buffer's object, which may be long after, docs/archive.md "Memory").
   */
  private window: Buffer = Buffer.alloc(0);
  /** Bytes held at the start of `window`. */
  private held = 0;
  /** A value longer than the bytes held is scanned again once twice as many are held. */
  private retryAt = 0;
  /** Top-level members in file order; split arrays are empty here and filled in at the end. */
  private readonly members = new Map<string, unknown>();
  private readonly arrays = new Map<string, unknown[]>();
  private key = "";
  private elementCheck: ((value: unknown) => unknown) | undefined;
  private elements: unknown[] = [];
  private readonly found = newValueEnd();
  /** False once anything read is not as the canonical writer writes it. */
  private laidOut = true;
  /** The whitespace since the last token, as `gapOf` encodes it. */
  private gap = 0;
  private previousKey = "";

  /**
   * Takes the next bytes of the file (copied: the caller may reuse `chunk` once this returns);
   * false once this path has given up.
   */
  feed(chunk: Uint8Array): boolean {
    if (this.phase === "failed") return false;
    if (this.held === 0) {
      // Nothing held: the chunk is scanned where it is (a whole file in memory is not copied).
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const consumed = this.scan(bytes);
      if (this.hasFailed()) return false;
      this.hold(bytes.subarray(consumed));
      this.retryAt = this.held * 2;
      return true;
    }
    this.hold(chunk);
    if (this.held < this.retryAt) return true;
    this.scanHeld();
    return !this.hasFailed();
  }

  /** Appends `bytes` to those held, in `window` (grown when they do not fit). */
  private hold(bytes: Uint8Array): void {
    const needed = this.held + bytes.length;
    if (needed > this.window.length) {
      const larger = Buffer.allocUnsafe(Math.max(needed, this.window.length * 2));
      this.window.copy(larger, 0, 0, this.held);
      this.window = larger;
    }
    this.window.set(bytes, this.held);
    this.held = needed;
  }

  private hasFailed(): boolean {
    return this.phase === "failed";
  }

  /**
   * Once `finish` has returned a conversation: whether the bytes are exactly its canonical
   * encoding (docs/format-1.md, "Byte rules"), so that saving it unchanged has nothing to write.
   */
  get canonical(): boolean {
    return this.laidOut && this.phase === "end" && this.gap === gapOf(0);
  }

  /** The conversation, or undefined when the whole-file decoder must decide. */
  finish(): SavedConversation | undefined {
    if (this.held > 0) this.scanHeld();
    if (this.phase !== "end" || this.held > 0) return undefined;
    const skeleton: Record<string, unknown> = {};
    // Every key was checked to be one of format 1's, so none of them is `__proto__`.
    for (const [key, value] of this.members) skeleton[key] = value;
    const conversation = validateConversation(skeleton) as Record<string, unknown> | undefined;
    if (conversation === undefined) return undefined;
    for (const [key, elements] of this.arrays) conversation[key] = elements;
    return conversation as unknown as SavedConversation;
  }

  private scanHeld(): void {
    const consumed = this.scan(this.window.subarray(0, this.held));
    const rest = this.phase === "failed" ? 0 : this.held - consumed;
    // What is left moves to the start, where the next chunk is appended to it.
    if (rest > 0 && consumed > 0) this.window.copyWithin(0, consumed, this.held);
    this.held = rest;
    this.retryAt = rest * 2;
  }

  private fail(): number {
    this.phase = "failed";
    return 0;
  }

  /** JSON.parse of one value's bytes, checked; undefined when anything is in doubt. */
  private parse(
    bytes: Buffer,
    start: number,
    end: number,
    depth: number,
    members: number,
  ): CheckedValue | undefined {
    if (!isUtf8(bytes.subarray(start, end))) return undefined;
    const parsed = checkedJsonParse(bytes.toString("utf8", start, end), depth, members);
    if (parsed !== undefined && !parsed.keysInOrder) this.laidOut = false;
    return parsed;
  }

  /**
   * Checks the whitespace before the token just read against what the canonical writer puts
   * there (`gapOf`), and starts counting the next.
   */
  private token(expected: number): void {
    if (this.gap !== expected) this.laidOut = false;
    this.gap = 0;
  }

  /** Counts a whitespace byte into `gap`; false for any other byte. */
  private whitespace(byte: number | undefined): boolean {
    if (byte === SPACE) {
      if (this.gap >= 0) this.gap++;
    } else if (byte === NEWLINE) {
      this.gap = this.gap === 0 ? gapOf(0) : ODD_GAP;
    } else if (isJsonWhitespace(byte)) this.gap = ODD_GAP;
    else return false;
    return true;
  }

  /** Reads tokens from `bytes`; returns how many bytes were consumed. */
  private scan(bytes: Buffer): number {
    const length = bytes.length;
    const found = this.found;
    let position = 0;
    for (;;) {
      while (position < length && this.whitespace(bytes[position])) position++;
      if (position >= length) return position;
      const byte = bytes[position];
      switch (this.phase) {
        case "start":
          if (byte !== OPEN_BRACE) return this.fail();
          this.token(0);
          this.phase = "firstKey";
          position++;
          break;
        case "firstKey":
        case "key": {
          if (byte === CLOSE_BRACE && this.phase === "firstKey") {
            this.token(0);
            this.phase = "end";
            position++;
            break;
          }
          if (byte !== QUOTE) return this.fail();
          const end = stringEnd(bytes, position);
          if (end === NEED_MORE) return position;
          const key = this.parse(bytes, position, end, 1, 0)?.value;
          if (typeof key !== "string" || !isConversationKey(key) || this.members.has(key)) {
            return this.fail();
          }
          this.token(gapOf(1));
          // Keys are sorted; format 1's are ASCII, so any escape makes the bytes longer.
          if (end - position !== key.length + 2 || !(this.previousKey < key)) this.laidOut = false;
          this.previousKey = key;
          this.key = key;
          this.phase = "colon";
          position = end;
          break;
        }
        case "colon":
          if (byte !== COLON) return this.fail();
          this.token(1);
          this.phase = "value";
          position++;
          break;
        case "value": {
          const elementCheck = byte === OPEN_BRACKET ? elementCheckOf(this.key) : undefined;
          if (elementCheck !== undefined) {
            this.token(1);
            this.elementCheck = elementCheck;
            this.elements = [];
            this.members.set(this.key, []);
            this.arrays.set(this.key, this.elements);
            this.phase = "firstElement";
            position++;
            break;
          }
          valueEnd(bytes, position, found, 1);
          if (found.end === NEED_MORE) return position;
          this.token(1);
          if (!found.canonical) this.laidOut = false;
          const parsed = this.parse(bytes, position, found.end, 1, found.members);
          if (parsed === undefined) return this.fail();
          this.members.set(this.key, parsed.value);
          this.phase = "afterValue";
          position = found.end;
          break;
        }
        case "afterValue":
          if (byte === COMMA) this.token(0);
          else if (byte === CLOSE_BRACE) this.token(gapOf(0));
          else return this.fail();
          this.phase = byte === COMMA ? "key" : "end";
          position++;
          break;
        case "firstElement":
        case "element": {
          if (byte === CLOSE_BRACKET && this.phase === "firstElement") {
            this.token(0);
            this.phase = "afterValue";
            position++;
            break;
          }
          valueEnd(bytes, position, found, 2);
          if (found.end === NEED_MORE) return position;
          this.token(gapOf(2));
          if (!found.canonical) this.laidOut = false;
          const parsed = this.parse(bytes, position, found.end, 2, found.members);
          const checked = parsed && this.elementCheck?.(parsed.value);
          if (checked === undefined) return this.fail();
          this.elements.push(checked);
          this.phase = "afterElement";
          position = found.end;
          break;
        }
        case "afterElement":
          if (byte === COMMA) this.token(0);
          else if (byte === CLOSE_BRACKET) this.token(gapOf(1));
          else return this.fail();
          this.phase = byte === COMMA ? "element" : "afterValue";
          position++;
          break;
        case "end":
        case "failed":
          return this.fail();
      }
    }
  }
}
