import { record, text } from "./json-members.js";
import type { WireFormat } from "./usage.js";

/**
 * The names of a recorded request's tool calls by id, for its tool results (messages.ts):
 * a result names the call of the nearest assistant message before it with its id. Read once,
 * front to back, as the results are written in order; looking back from each result instead
 * costs the request's length per result, and a request of many results with ids no call has
 * would cost its length squared.
 */
export class ToolCallNames {
  readonly #names = new Map<string, string>();
  /** Messages before this index are read into #names. */
  #read = 0;

  constructor(
    private readonly format: WireFormat,
    private readonly messages: readonly unknown[],
  ) {}

  /** The name of the call `callId` among the messages before `before` ("" when none). */
  nameOf(before: number, callId: string): string {
    // Asked about an earlier place than already read (not how the history is written): look back.
    if (before < this.#read) return lookBack(this.format, this.messages, before, callId);
    for (; this.#read < before; this.#read++) {
      // The first call of an id within one message is the one a result names.
      const own = new Map<string, string>();
      for (const [id, name] of callsOf(this.format, this.messages[this.#read])) {
        if (!own.has(id)) own.set(id, name);
      }
      for (const [id, name] of own) this.#names.set(id, name);
    }
    return this.#names.get(callId) ?? "";
  }
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
