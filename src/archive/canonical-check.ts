import type { SavedConversation } from "../format/conversation-schema.js";

/**
 * Whether `bytes` are exactly the canonical encoding of `conversation` (docs/format-1.md, "Byte
 * rules"), checked at open so that a save of the conversation as it was read writes nothing.
 * The canonical text is generated in windows of about 64 KiB and compared with the bytes as it
 * goes: no copy of the file is built. Strings and numbers are written by the engine's
 * JSON.stringify, whose escaping and number printing the byte rules adopt. Anything this walk
 * does not recognise counts as not canonical (the next save then rewrites the file).
 */
const WINDOW_CHARACTERS = 64 * 1024;
const MAX_DEPTH = 1000;

const lineStarts: string[] = [];
function lineStart(depth: number): string {
  let start = lineStarts[depth];
  if (start === undefined) {
    start = "\n" + "  ".repeat(depth);
    lineStarts[depth] = start;
  }
  return start;
}

class CanonicalComparison {
  private pending = "";
  private offset = 0;
  matches = true;

  constructor(private readonly bytes: Uint8Array) {}

  push(text: string): void {
    this.pending += text;
    if (this.pending.length >= WINDOW_CHARACTERS) this.flush();
  }

  flush(): void {
    if (!this.matches || this.pending.length === 0) return;
    const chunk = Buffer.from(this.pending);
    this.pending = "";
    const end = this.offset + chunk.length;
    if (end > this.bytes.length || Buffer.compare(chunk, this.bytes.subarray(this.offset, end))) {
      this.matches = false;
    }
    this.offset = end;
  }

  finish(): boolean {
    this.flush();
    return this.matches && this.offset === this.bytes.length;
  }

  value(value: unknown, depth: number): void {
    if (!this.matches) return;
    switch (typeof value) {
      case "string":
        this.push(JSON.stringify(value));
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
          this.members(new Map(Object.entries(value)), depth);
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

export function isCanonicalEncoding(conversation: SavedConversation, bytes: Uint8Array): boolean {
  const comparison = new CanonicalComparison(bytes);
  comparison.value(conversation, 0);
  comparison.push("\n");
  return comparison.finish();
}
