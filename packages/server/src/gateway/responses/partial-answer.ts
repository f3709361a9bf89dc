import type { Block } from "verbatim-llm/history";
import type { StreamEvent } from "verbatim-llm/providers";

/**
 * The answer as far as it has streamed, kept when a response stops before the upstream
 * finished (a client that hung up, a cancel): the text so far and every tool call whose
 * arguments arrived whole (complete JSON); a call cut in the middle is dropped, since no
 * provider takes it back.
 */
export class PartialAnswer {
  #text = "";
  readonly #calls = new Map<string, { name: string; arguments: string }>();
  readonly #order: ({ kind: "text" } | { kind: "call"; id: string })[] = [];

  add(event: StreamEvent): void {
    switch (event.type) {
      case "text":
        if (this.#text === "") this.#order.push({ kind: "text" });
        this.#text += event.text;
        break;
      case "toolCallStart":
        this.#calls.set(event.id, { name: event.name, arguments: "" });
        this.#order.push({ kind: "call", id: event.id });
        break;
      case "toolCallDelta": {
        const call = this.#calls.get(event.id);
        if (call !== undefined) call.arguments += event.argumentsDelta;
        break;
      }
      default:
        break;
    }
  }

  blocks(): Block[] {
    const blocks: Block[] = [];
    for (const entry of this.#order) {
      if (entry.kind === "text") {
        if (this.#text !== "") blocks.push({ type: "text", text: this.#text });
        continue;
      }
      const call = this.#calls.get(entry.id);
      if (call === undefined || !isCompleteJson(call.arguments)) continue;
      blocks.push({ type: "toolCall", id: entry.id, name: call.name, arguments: call.arguments });
    }
    return blocks;
  }
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text === "" ? "{}" : text);
    return true;
  } catch {
    return false;
  }
}
