import { readSync } from "node:fs";
import type { SavedConversation } from "../format/conversation-schema.js";

/**
 * Whether `bytes` are exactly the canonical encoding of `conversation` (docs/format-1.md, "Byte
 * rules"), checked at open so that a save of the conversation as it was read writes nothing.
 * The canonical text is generated piece by piece and each piece's UTF-8 compared with the file's
 * bytes as it goes (no copy of the file, as bytes or as text, is built): bytes in memory, or
 * read from the open file in batches (`bytesOfOpenFile`), so the open need not keep the file. Strings and numbers are written by the engine's
 * JSON.stringify, whose escaping and number printing the byte rules adopt. Anything this walk
 * does not recognise counts as not canonical (the next save then rewrites the file).
 */
const MAX_DEPTH = 1000;
const BATCH_CHARACTERS = 16 * 1024;
/** Characters JSON.stringify may escape (surrogates: when lone; checked by it, not here). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

const lineStarts: string[] = [];
function lineStart(depth: number): string {
  let start = lineStarts[depth];
  if (start === undefined) {
    start = "\n" + "  ".repeat(depth);
    lineStarts[depth] = start;
  }
  return start;
}

/** The bytes the canonical text is compared with. */
export interface ComparedBytes {
  readonly length: number;
  /** Whether the first `length` bytes of `expected` equal the bytes at `offset`. */
  equals(expected: Buffer, length: number, offset: number): boolean;
}

export function bytesInMemory(bytes: Uint8Array): ComparedBytes {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return {
    length: buffer.length,
    equals: (expected, length, offset) =>
      buffer.compare(expected, 0, length, offset, offset + length) === 0,
  };
}

/** The first `size` bytes of an open file, read (synchronously) where they are compared. */
export function bytesOfOpenFile(fd: number, size: number): ComparedBytes {
  let read = Buffer.allocUnsafe(64 * 1024);
  return {
    length: size,
    equals(expected, length, offset) {
      if (read.length < length) read = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const bytesRead = readSync(fd, read, filled, length - filled, offset + filled);
        if (bytesRead === 0) return false;
        filled += bytesRead;
      }
      return expected.compare(read, 0, length, 0, length) === 0;
    },
  };
}

class CanonicalComparison {
  private offset = 0;
  private scratch = Buffer.allocUnsafe(64 * 1024);
  matches = true;

  constructor(private readonly bytes: ComparedBytes) {}

  private pending = "";

  /** Adds `piece` to the text compared next (in batches of about 16 KiB). */
  push(piece: string): void {
    this.pending += piece;
    if (this.pending.length >= BATCH_CHARACTERS) this.flush();
  }

  /** Compares the UTF-8 of the pending text with the file's bytes at the current offset. */
  private flush(): void {
    const piece = this.pending;
    this.pending = "";
    if (!this.matches || piece.length === 0) return;
    if (piece.length * 3 > this.scratch.length) {
      this.scratch = Buffer.allocUnsafe(piece.length * 3);
    }
    const length = this.scratch.write(piece, 0, "utf8");
    const end = this.offset + length;
    if (end > this.bytes.length || !this.bytes.equals(this.scratch, length, this.offset)) {
      this.matches = false;
    }
    this.offset = end;
  }

  /** A string as JSON.stringify writes it; without anything to escape, compared as it is. */
  string(value: string): void {
    if (NEEDS_ESCAPE.test(value)) {
      this.push(JSON.stringify(value));
      return;
    }
    this.push('"');
    this.push(value);
    this.push('"');
  }

  finish(): boolean {
    this.flush();
    return this.matches && this.offset === this.bytes.length;
  }

  value(value: unknown, depth: number): void {
    if (!this.matches) return;
    switch (typeof value) {
      case "string":
        this.string(value);
        return;
      case "number":
        if (Number.isFinite(value)) this.push(JSON.stringify(value));
        else this.matches = false;
        return;
      case "boolean":
        this.push(value ? "true" : "false");
        return;
      case "object":
        if (value === null) this.push("null");
        else if (depth >= MAX_DEPTH) this.matches = false;
        else if (Array.isArray(value)) this.array(value, depth);
        else if (value instanceof Map) this.members(value as Map<unknown, unknown>, depth);
        else if (Object.getPrototypeOf(value) === Object.prototype) {
          this.object(value as Record<string, unknown>, depth);
        } else this.matches = false;
        return;
      default:
        this.matches = false;
    }
  }

  private array(values: readonly unknown[], depth: number): void {
    if (values.length === 0) {
      this.push("[]");
      return;
    }
    const start = lineStart(depth + 1);
    for (let index = 0; index < values.length && this.matches; index++) {
      const value = values[index];
      if (value === undefined) {
        this.matches = false;
        return;
      }
      this.push(index === 0 ? "[" + start : "," + start);
      this.value(value, depth + 1);
    }
    this.push(lineStart(depth) + "]");
  }

  private object(record: Record<string, unknown>, depth: number): void {
    const keys = Object.keys(record).filter((key) => record[key] !== undefined);
    if (keys.length === 0) {
      this.push("{}");
      return;
    }
    keys.sort();
    const start = lineStart(depth + 1);
    for (let index = 0; index < keys.length && this.matches; index++) {
      const key = keys[index] as string;
      this.push((index === 0 ? "{" : ",") + start + JSON.stringify(key) + " : ");
      this.value(record[key], depth + 1);
    }
    this.push(lineStart(depth) + "}");
  }

  private members(entries: Map<unknown, unknown>, depth: number): void {
    const keys: string[] = [];
    for (const [key, value] of entries) {
      if (typeof key !== "string") {
        this.matches = false;
        return;
      }
      if (value !== undefined) keys.push(key);
    }
    if (keys.length === 0) {
      this.push("{}");
      return;
    }
    keys.sort();
    const start = lineStart(depth + 1);
    let first = true;
    for (const key of keys) {
      if (!this.matches) return;
      this.push((first ? "{" : ",") + start + JSON.stringify(key) + " : ");
      first = false;
      this.value(entries.get(key), depth + 1);
    }
    this.push(lineStart(depth) + "}");
  }
}

/** Top-level array elements compared between two yields of `canonicalEncodingSteps`. */
const ELEMENTS_PER_STEP = 32;

/**
 * The check as steps: it yields between groups of top-level array elements (history
 * messages, items), so that it can run in slices after the open has returned.
 */
export function* canonicalEncodingSteps(
  conversation: SavedConversation,
  bytes: ComparedBytes,
): Generator<void, boolean> {
  const comparison = new CanonicalComparison(bytes);
  const record = conversation as unknown as Record<string, unknown>;
  if (Object.getPrototypeOf(record) !== Object.prototype) return false;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  if (keys.length === 0) {
    comparison.push("{}\n");
    return comparison.finish();
  }
  const memberStart = lineStart(1);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const value = record[key];
    comparison.push((index === 0 ? "{" : ",") + memberStart + JSON.stringify(key) + " : ");
    if (!Array.isArray(value) || value.length === 0) {
      comparison.value(value, 1);
      continue;
    }
    const elementStart = lineStart(2);
    for (let element = 0; element < value.length; element++) {
      if (!comparison.matches) return false;
      const item: unknown = value[element];
      if (item === undefined) return false;
      comparison.push(element === 0 ? "[" + elementStart : "," + elementStart);
      comparison.value(item, 2);
      if (element % ELEMENTS_PER_STEP === ELEMENTS_PER_STEP - 1) yield;
    }
    comparison.push(lineStart(1) + "]");
  }
  comparison.push(lineStart(0) + "}\n");
  return comparison.finish();
}

export function isCanonicalEncoding(conversation: SavedConversation, bytes: Uint8Array): boolean {
  const steps = canonicalEncodingSteps(conversation, bytesInMemory(bytes));
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * Runs the check in slices of about `sliceMilliseconds`, giving the event loop back between
 * them (setImmediate), so that the open that starts it returns at once; stops (false) once
 * `cancelled.value` is set.
 */
export async function checkCanonicalInSlices(
  conversation: SavedConversation,
  bytes: ComparedBytes,
  cancelled: { readonly value: boolean },
  sliceMilliseconds = 5,
): Promise<boolean> {
  const steps = canonicalEncodingSteps(conversation, bytes);
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    if (performance.now() - sliceStart >= sliceMilliseconds) {
      await new Promise((resolve) => setImmediate(resolve));
      if (cancelled.value) return false;
      sliceStart = performance.now();
    }
  }
}
