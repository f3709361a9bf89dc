/**
 * Accumulates one round's response (streamed or whole) into a RoundResult: the history
 * message (text and tool calls; web search results as text), the panel parts, the signed
 * material for the rest of the turn, the usage and the stop reason.
 */
import { VerbatimError } from "../../core/errors.js";
import type { JsonValue } from "../../core/strict-json.js";
import type { Block } from "../../history/message.js";
import type { Usage } from "../../pricing/types.js";
import { ZERO_USAGE } from "../../pricing/types.js";
import type {
  ModelImage,
  PanelCitation,
  PanelPart,
  ProviderId,
  RoundResult,
  RoundWarning,
  StopReason,
  StreamEvent,
} from "../types.js";

type Slot =
  | { kind: "text"; text: string; signature?: string }
  | {
      kind: "toolCall";
      id: string;
      name: string;
      arguments: string;
      signature?: string;
      caller?: JsonValue;
    }
  | { kind: "image"; sha256: string; mimeType: string }
  | { kind: "compaction"; text: string; native: JsonValue };

/** The text that enters the history for a web search (A23: results enter as text). */
export function webSearchText(query: string, results: string): string {
  return results === "" ? `[Web search: ${query}]` : `[Web search: ${query}]\n${results}`;
}

/**
 * The text that enters the history for a provider's compaction summary (Anthropic): the
 * summary is provider-independent, so every provider gets it after the turn (A23, A24).
 */
export function compactionText(summary: string): string {
  return `[Compaction summary]\n${summary}`;
}

/** The text that enters the history for a web fetch: `[Web fetch: <url>]` and what it got. */
export function webFetchText(url: string, result: string): string {
  return result === "" ? `[Web fetch: ${url}]` : `[Web fetch: ${url}]\n${result}`;
}

export class RoundBuilder {
  private readonly slots: Slot[] = [];
  private readonly panel: PanelPart[] = [];
  private readonly leading: JsonValue[] = [];
  private readonly trailing: JsonValue[] = [];
  private readonly reasoningDetails: JsonValue[] = [];
  private readonly toolSlots = new Map<string, Slot & { kind: "toolCall" }>();
  private readonly warnings: RoundWarning[] = [];
  private readonly images: ModelImage[] = [];
  /** Anthropic: the response's code-execution container, as received. */
  container: JsonValue | undefined;
  usage: Usage = ZERO_USAGE;
  stopReason: StopReason = "other";
  rawStopReason: string | undefined;
  responseId: string | undefined;
  model: string;
  /** Set when the stream said it finished (message_stop, [DONE], response.completed…). */
  finished = false;

  constructor(
    readonly provider: ProviderId,
    requestedModel: string,
    private readonly events: StreamEvent[] = [],
  ) {
    this.model = requestedModel;
  }

  /** Events produced since the last call. */
  drain(): StreamEvent[] {
    return this.events.splice(0, this.events.length);
  }

  /** Appends text to the current text block (a new block after anything else). */
  text(delta: string, newBlock = false): void {
    if (delta === "") return;
    const last = this.slots[this.slots.length - 1];
    if (!newBlock && last !== undefined && last.kind === "text" && last.signature === undefined) {
      last.text += delta;
    } else {
      this.slots.push({ kind: "text", text: delta });
    }
    const part = this.panel[this.panel.length - 1];
    if (part !== undefined && part.kind === "text") {
      this.panel[this.panel.length - 1] = { ...part, text: part.text + delta };
    } else this.panel.push({ kind: "text", text: delta });
    this.events.push({ type: "text", text: delta });
  }

  /** Gemini: a signature on the text just written; true when it could be attached. */
  signLastText(signature: string): boolean {
    const last = this.slots[this.slots.length - 1];
    if (last === undefined || last.kind !== "text" || last.signature !== undefined) return false;
    last.signature = signature;
    return true;
  }

  thinking(delta: string): void {
    if (delta === "") return;
    const part = this.panel[this.panel.length - 1];
    if (part !== undefined && part.kind === "thinking") {
      this.panel[this.panel.length - 1] = { kind: "thinking", text: part.text + delta };
    } else this.panel.push({ kind: "thinking", text: delta });
    this.events.push({ type: "thinking", text: delta });
  }

  toolCallStart(key: string, id: string, name: string, initialArguments = ""): void {
    const slot: Slot & { kind: "toolCall" } = {
      kind: "toolCall",
      id,
      name,
      arguments: initialArguments,
    };
    this.slots.push(slot);
    this.toolSlots.set(key, slot);
    this.events.push({ type: "toolCallStart", id, name });
    if (initialArguments !== "") {
      this.events.push({ type: "toolCallDelta", id, argumentsDelta: initialArguments });
    }
  }

  hasToolCall(key: string): boolean {
    return this.toolSlots.has(key);
  }

  toolCallDelta(key: string, delta: string): void {
    const slot = this.toolSlots.get(key);
    if (slot === undefined) {
      throw new VerbatimError(
        "provider_response_invalid",
        `arguments for an unknown tool call ${key}`,
      );
    }
    if (delta === "") return;
    slot.arguments += delta;
    this.events.push({ type: "toolCallDelta", id: slot.id, argumentsDelta: delta });
  }

  /** Replaces a tool call's arguments when the stream only gave them whole at the end. */
  toolCallArguments(key: string, text: string): void {
    const slot = this.toolSlots.get(key);
    if (slot !== undefined && slot.arguments === "") slot.arguments = text;
  }

  webSearch(query: string, results: string): void {
    this.slots.push({ kind: "text", text: webSearchText(query, results) });
    this.panel.push({ kind: "webSearch", query, results });
    this.events.push({ type: "webSearch", query, results });
  }

  /** A web fetch, shown like a search (`action: "fetch"`, the URL as the query). */
  webFetch(url: string, result: string): void {
    this.slots.push({ kind: "text", text: webFetchText(url, result) });
    this.panel.push({ kind: "webSearch", query: url, results: result, action: "fetch" });
    this.events.push({ type: "webSearch", query: url, results: result, action: "fetch" });
  }

  /** A source the text just written cites (kept on its panel text part). */
  citation(citation: PanelCitation): void {
    const part = this.panel[this.panel.length - 1];
    if (part === undefined || part.kind !== "text") return;
    this.panel[this.panel.length - 1] = {
      ...part,
      citations: [...(part.citations ?? []), citation],
    };
  }

  /**
   * A compaction: Anthropic's summary enters the history as text and, within the turn, goes
   * back as the native block; an encrypted compaction (no summary) is signed material only.
   */
  compaction(summary: string | undefined, native: JsonValue): void {
    if (summary === undefined) this.leading.push(native);
    else this.slots.push({ kind: "compaction", text: compactionText(summary), native });
    this.panel.push(
      summary === undefined ? { kind: "compaction" } : { kind: "compaction", summary },
    );
  }

  /** An image the model generated: an `image` block of the message, its bytes beside it. */
  image(image: ModelImage): void {
    this.slots.push({ kind: "image", sha256: image.sha256, mimeType: image.mimeType });
    if (!this.images.some((held) => held.sha256 === image.sha256)) this.images.push(image);
  }

  /** Anthropic: the `caller` of a tool call made from code execution. */
  toolCallCaller(key: string, caller: JsonValue): void {
    const slot = this.toolSlots.get(key);
    if (slot !== undefined) slot.caller = caller;
  }

  warn(warning: RoundWarning): void {
    this.warnings.push(warning);
  }

  addLeading(value: JsonValue): void {
    this.leading.push(value);
  }

  addTrailing(value: JsonValue): void {
    this.trailing.push(value);
  }

  addReasoningDetail(value: JsonValue): void {
    this.reasoningDetails.push(value);
  }

  setUsage(usage: Usage): void {
    this.usage = usage;
    this.events.push({ type: "usage", usage });
  }

  setStop(reason: StopReason, raw: string | undefined): void {
    this.stopReason = reason;
    this.rawStopReason = raw;
  }

  get toolCallCount(): number {
    return this.toolSlots.size;
  }

  /** The result of a stream that must have said it finished; `early` says what it lacked. */
  buildFinished(early: string): RoundResult {
    if (!this.finished) throw new VerbatimError("provider_response_invalid", early);
    return this.build();
  }

  build(): RoundResult {
    const content: Block[] = [];
    const blockSignatures: { block: number; signature: string }[] = [];
    const toolCallCallers: { block: number; caller: JsonValue }[] = [];
    const nativeBlocks: { block: number; value: JsonValue }[] = [];
    for (const slot of this.slots) {
      if (slot.kind === "compaction") {
        nativeBlocks.push({ block: content.length, value: slot.native });
        content.push({ type: "text", text: slot.text });
      } else if (slot.kind === "image") {
        content.push({ type: "image", sha256: slot.sha256, mimeType: slot.mimeType });
      } else if (slot.kind === "text") {
        if (slot.signature !== undefined) {
          blockSignatures.push({ block: content.length, signature: slot.signature });
        }
        content.push({ type: "text", text: slot.text });
      } else {
        if (slot.signature !== undefined) {
          blockSignatures.push({ block: content.length, signature: slot.signature });
        }
        if (slot.caller !== undefined) {
          toolCallCallers.push({ block: content.length, caller: slot.caller });
        }
        content.push({ type: "toolCall", id: slot.id, name: slot.name, arguments: slot.arguments });
      }
    }
    const result: RoundResult = {
      provider: this.provider,
      model: this.model,
      ...(this.responseId === undefined ? {} : { responseId: this.responseId }),
      message: { role: "assistant", content },
      panel: this.panel,
      signed: {
        provider: this.provider,
        leading: this.leading,
        blockSignatures,
        trailing: this.trailing,
        reasoningDetails: this.reasoningDetails,
        ...(toolCallCallers.length === 0 ? {} : { toolCallCallers }),
        ...(nativeBlocks.length === 0 ? {} : { nativeBlocks }),
      },
      usage: this.usage,
      stopReason: this.stopReason,
      ...(this.rawStopReason === undefined ? {} : { rawStopReason: this.rawStopReason }),
      ...(this.images.length === 0 ? {} : { images: this.images }),
      ...(this.container === undefined ? {} : { container: this.container }),
      ...(this.warnings.length === 0 ? {} : { warnings: this.warnings }),
    };
    return result;
  }

  /** Gemini: a thought signature on the tool call just started. */
  signToolCall(key: string, signature: string): void {
    const slot = this.toolSlots.get(key);
    if (slot !== undefined) slot.signature = signature;
  }
}

/** A count from a JSON value (absent, null or not a number is 0). */
export function countOf(value: JsonValue | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

/** A member of a JSON object (undefined when the value is not an object). */
export function member(value: JsonValue | undefined, key: string): JsonValue | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return value[key];
}

export function stringOf(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function arrayOf(value: JsonValue | undefined): readonly JsonValue[] {
  return Array.isArray(value) ? value : [];
}
