import type { ItemOfType } from "../format/items.js";
import type { TextBlock } from "../history/message.js";
import type { ProviderBackend, BackendRoundEvent } from "./backend.js";
import { providerCompactionNotice } from "./provider-summary.js";
import { replaceItem } from "./state.js";
import { settleToolCalls, type SettleOutcome } from "./tool-calls.js";
import { toolDefinition } from "./tools.js";
import type { TurnControl, TurnHost } from "./turn-host.js";

export type TurnOutcome = "ended" | "paused" | "cancelled" | "failed";

/** Streams a round's events into panel items: consecutive deltas of one kind grow one item. */
class PanelStream {
  private current: ItemOfType<"assistant"> | ItemOfType<"thinking"> | undefined;
  text = "";
  /** The round's latest assistant item (its citations are added when the round ends). */
  lastAnswer: ItemOfType<"assistant"> | undefined;

  constructor(private readonly host: TurnHost) {}

  handle(event: BackendRoundEvent): void {
    const items = this.host.state.items;
    switch (event.type) {
      case "text":
      case "thinking": {
        if (event.type === "text") this.text += event.text;
        const type = event.type === "text" ? "assistant" : "thinking";
        const current = this.current;
        if (current !== undefined && current.type === type) {
          const grown = { ...current, text: current.text + event.text };
          this.current = grown;
          if (grown.type === "assistant") this.lastAnswer = grown;
          replaceItem(items, grown);
        } else {
          const created: ItemOfType<"assistant"> | ItemOfType<"thinking"> =
            type === "assistant"
              ? { id: this.host.newId(), type, text: event.text }
              : { id: this.host.newId(), type, text: event.text };
          this.current = created;
          if (created.type === "assistant") this.lastAnswer = created;
          items.push(created);
        }
        break;
      }
      case "toolCall":
        this.current = undefined;
        items.push({
          id: this.host.newId(),
          type: "tool",
          name: event.name,
          status: "running",
          callID: event.id,
        });
        break;
      case "webSearch":
        this.current = undefined;
        items.push({
          id: this.host.newId(),
          type: "webSearch",
          query: event.query,
          results: [...event.results],
          ...(event.detail === undefined ? {} : { detail: event.detail }),
        });
        break;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
    this.host.update();
  }
}

/**
 * Runs rounds on a provider backend until the model stops (or the turn pauses on an approval,
 * is cancelled, or fails): render and stream through the backend, append the answer, run the
 * tool calls, repeat. Every request's usage is recorded as it ends.
 */
export async function runProviderRounds(
  host: TurnHost,
  backend: ProviderBackend,
  control: TurnControl,
): Promise<TurnOutcome> {
  const signal = control.controller.signal;
  const tools = host.tools.map(toolDefinition);
  for (;;) {
    const settled: SettleOutcome = await settleToolCalls(host, control);
    if (settled === "paused") return "paused";
    if (settled === "cancelled" || signal.aborted) return "cancelled";
    const stream = new PanelStream(host);
    let result;
    try {
      result = await backend.round({
        system: host.system,
        history: [...host.state.history],
        turnStart: host.state.sentFacts.at(-1)?.message ?? 0,
        images: (sha256) => host.imageStore.get(sha256),
        tools,
        signal,
        onEvent: (event) => {
          if (control.alive()) stream.handle(event);
        },
      });
    } catch (error) {
      if (!control.alive()) return "cancelled";
      if (signal.aborted) {
        keepPartialText(host, stream.text);
        return "cancelled";
      }
      const message = error instanceof Error ? error.message : String(error);
      host.state.items.push({ id: host.newId(), type: "failure", message });
      host.update();
      return "failed";
    }
    if (!control.alive()) return "cancelled";
    if (result.compaction === undefined) {
      host.recordRound(backend.provider, backend.model, result.usage);
    } else host.recordCompactionRound(backend.provider, backend.model, result.usage);
    // Generated images first: the history's image blocks must find their bytes.
    for (const image of result.images ?? []) host.imageStore.set(image.sha256, image.bytes);
    if (result.message.content.length > 0) host.state.history.push(result.message);
    if (result.compaction !== undefined) {
      host.state.items.push({
        id: host.newId(),
        type: "notice",
        kind: "compacted",
        text: providerCompactionNotice(result.compaction, backend.provider),
      });
      if (result.compaction.kind === "summary") {
        const { block, summary } = result.compaction;
        control.providerSummary = { message: result.message, block, summary };
      }
    }
    if (stream.text === "") {
      const text = result.message.content
        .filter((block): block is TextBlock => block.type === "text")
        .map((block) => block.text)
        .join("");
      if (text !== "") {
        stream.lastAnswer = { id: host.newId(), type: "assistant", text };
        host.state.items.push(stream.lastAnswer);
      }
    }
    if (result.citations !== undefined && stream.lastAnswer !== undefined) {
      replaceItem(host.state.items, { ...stream.lastAnswer, citations: [...result.citations] });
    }
    host.update();
    const calls = result.message.content.some((block) => block.type === "toolCall");
    if (!calls) return signal.aborted ? "cancelled" : "ended";
  }
}

/** A round cancelled mid-stream keeps the text the user already saw, as the model's answer. */
function keepPartialText(host: TurnHost, text: string): void {
  if (text === "") return;
  host.state.history.push({ role: "assistant", content: [{ type: "text", text }] });
}
