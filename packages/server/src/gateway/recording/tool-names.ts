import { record, text } from "./json-members.js";
import type { WireFormat } from "./usage.js";

/**
 * The names of a recorded request's tool calls by id, for its tool results (messages.ts):
 * a result names the call of the nearest assistant message before it with its id. Placing
 * writes the messages past the part already stored, in order: the messages from the first one
 * asked about are read front to back, and the ones before it back to front, only as far as a
 * result's id needs, so a call that adds a turn to a long history reads its last messages, not
 * the whole history. Each message is read at most once: a request of many results with ids no
 * call has costs its length, not its length squared.
 */
export class ToolCallNames {
  /** The calls of the messages in [#start, #read), the nearest one of each id. */
  readonly #names = new Map<string, string>();
  /** The calls of the messages in [#low, #start), the nearest one of each id. */
  readonly #older = new Map<string, string>();
  #start = -1;
  #read = 0;
  #low = 0;

  constructor(
    private readonly format: WireFormat,
    private readonly messages: readonly unknown[],
  ) {}

  /** The name of the call `callId` among the messages before `before` ("" when none). */
  nameOf(before: number, callId: string): string {
    if (this.#start < 0) {
      this.#start = this.#read = this.#low = Math.min(before, this.messages.length);
    }
    // Asked about an earlier place than already read (not how the history is written): look back.
    if (before < this.#read) return lookBack(this.format, this.messages, before, callId);
    for (; this.#read < before; this.#read++) {
      for (const [id, name] of firstCalls(this.format, this.messages[this.#read])) {
        this.#names.set(id, name);
      }
    }
    const found = this.#names.get(callId) ?? this.#older.get(callId);
    if (found !== undefined) return found;
    while (this.#low > 0) {
      this.#low--;
      for (const [id, name] of firstCalls(this.format, this.messages[this.#low])) {
        if (!this.#older.has(id)) this.#older.set(id, name);
      }
      const older = this.#older.get(callId);
      if (older !== undefined) return older;
    }
    return "";
  }
}

/** The calls of one message: the first call of an id within it is the one a result names. */
function firstCalls(format: WireFormat, value: unknown): Map<string, string> {
  const own = new Map<string, string>();
  for (const [id, name] of callsOf(format, value)) if (!own.has(id)) own.set(id, name);
  return own;
}

/** The [id, name] of each tool call of an assistant message, in order (ids that are text). */
function callsOf(format: WireFormat, value: unknown): [string, string][] {
  const message = record(value);
  if (message?.["role"] !== "assistant") return [];
  const out: [string, string][] = [];
  if (format === "anthropic-messages") {
    for (const block of Array.isArray(message["content"]) ? message["content"] : []) {
      const call = record(block);
      const id = call?.["id"];
      if (call?.["type"] === "tool_use" && typeof id === "string")
        out.push([id, text(call["name"])]);
    }
  } else {
    for (const entry of Array.isArray(message["tool_calls"]) ? message["tool_calls"] : []) {
      const call = record(entry);
      const id = call?.["id"];
      if (typeof id === "string") out.push([id, text(record(call?.["function"])?.["name"])]);
    }
  }
  return out;
}

/** The name of the call `callId` of the nearest assistant message before `before`. */
function lookBack(
  format: WireFormat,
  messages: readonly unknown[],
  before: number,
  callId: string,
): string {
  for (let index = before - 1; index >= 0; index--) {
    for (const [id, name] of callsOf(format, messages[index])) if (id === callId) return name;
  }
  return "";
}
