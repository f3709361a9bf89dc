import { sha256Hex } from "../core/hash.js";
import type { SavedConversation, Usage } from "../format/conversation-schema.js";
import { emptyConversation } from "../format/empty.js";
import type { Item } from "../format/items.js";
import type {
  Block,
  ImageBlock,
  Message,
  ToolCallBlock,
  ToolResultBlock,
} from "../history/message.js";
import type { ImportedCall } from "./imported.js";

type ToolItem = Extract<Item, { type: "tool" }>;

interface UserSegment {
  readonly kind: "user";
  readonly blocks: Block[];
}

interface AssistantSegment {
  readonly kind: "assistant";
  readonly key: string;
  readonly blocks: Block[];
  readonly calls: ToolCallBlock[];
  readonly results: Map<string, ToolResultBlock>;
  /** Images tools returned: they reach the model in a user message after the tool message (A3). */
  readonly resultImages: Block[];
}

/** A model call the source reported, and the assistant message it was placed on. */
interface PlacedCall {
  readonly call: ImportedCall;
  readonly segment: AssistantSegment;
}

type Segment = UserSegment | AssistantSegment;

/** A tool call the source never answered, given a synthetic result by `finish`. */
export interface UnansweredCall {
  readonly call: ToolCallBlock;
  /** True when the call is the last thing of the conversation (the session stopped in it). */
  readonly atEnd: boolean;
}

export interface BuiltConversation {
  readonly conversation: SavedConversation;
  readonly images: ReadonlyMap<string, Uint8Array>;
  readonly unanswered: readonly UnansweredCall[];
  /** The model calls, by the history message that ends each (ImportedConversation.calls). */
  readonly calls: ReadonlyMap<Message, ImportedCall>;
  /**
   * The model calls the totals count that end no message of the history: their answer was
   * compacted or condensed away, or the source never kept it
   * (ImportedConversation.callsOutsideHistory).
   */
  readonly outsideCalls: readonly ImportedCall[];
}

const ZERO_USAGE: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  webSearchRequests: 0,
};

/**
 * Builds a format-1 conversation from another tool's records, in order: panel items, and the
 * model history since the last compaction boundary, with tool results paired to their calls by
 * id (wherever the source put them) and placed in the tool message right after the assistant
 * message that made the calls.
 */
export class ConversationBuilder {
  readonly items: Item[] = [];
  private segments: Segment[] = [];
  private readonly images = new Map<string, Uint8Array>();
  private readonly toolItems = new Map<string, ToolItem>();
  private readonly callNames = new Map<string, string>();
  private readonly usages = new Map<string, Usage>();
  /** The model calls by the source's id of each (placeCall). */
  private readonly placed = new Map<string, PlacedCall>();
  /** Model calls whose answer is not in the source's history, by the source's id (unplacedCall). */
  private readonly unplaced = new Map<string, ImportedCall>();
  private openAssistant: AssistantSegment | undefined;
  private lastAssistant: AssistantSegment | undefined;
  model: string | undefined;
  provider: string | undefined;

  item(item: Item): void {
    this.items.push(item);
    if (item.type === "tool" && item.callID !== undefined) this.toolItems.set(item.callID, item);
  }

  notice(id: string, kind: string, text: string, detail?: string): void {
    this.item({ id, type: "notice", kind, text, ...(detail === undefined ? {} : { detail }) });
  }

  /** Keeps image bytes content-addressed and returns the block that names them. */
  image(bytes: Uint8Array, mimeType: string): ImageBlock {
    const sha256 = sha256Hex(bytes);
    if (!this.images.has(sha256)) this.images.set(sha256, bytes);
    return { type: "image", sha256, mimeType };
  }

  user(blocks: readonly Block[]): void {
    if (blocks.length === 0) return;
    this.openAssistant = undefined;
    this.segments.push({ kind: "user", blocks: [...blocks] });
  }

  /**
   * Blocks of an assistant message. Blocks with the same `key` (the source's message id) join
   * the message still open, even with tool results between them (sources that write one line
   * per content block).
   */
  assistant(key: string, blocks: readonly Block[]): void {
    let segment = this.openAssistant;
    if (segment === undefined || segment.key !== key) {
      segment = {
        kind: "assistant",
        key,
        blocks: [],
        calls: [],
        results: new Map(),
        resultImages: [],
      };
      this.segments.push(segment);
      this.openAssistant = segment;
    }
    this.lastAssistant = segment;
    for (const block of blocks) {
      segment.blocks.push(block);
      if (block.type === "toolCall") {
        segment.calls.push(block);
        this.callNames.set(block.id, block.name);
      }
    }
  }

  /** Pairs a result with its call by id; false when no call of the history has that id. */
  toolResult(result: ToolResultBlock, images: readonly Block[] = []): boolean {
    for (let index = this.segments.length - 1; index >= 0; index--) {
      const segment = this.segments[index];
      if (segment?.kind !== "assistant") continue;
      const call = segment.calls.find((candidate) => candidate.id === result.callID);
      if (call === undefined) continue;
      segment.results.set(call.id, { ...result, toolName: call.name });
      segment.resultImages.push(...images);
      const item = this.toolItems.get(call.id);
      if (item !== undefined) item.status = result.isError ? "failed" : "succeeded";
      return true;
    }
    return false;
  }

  /** The name of the call with this id, if the conversation has one. */
  callName(callID: string): string | undefined {
    return this.callNames.get(callID);
  }

  /**
   * A compaction boundary: the history starts again; the panel keeps everything. Returns the
   * number of tool results the history held, whose content only the source keeps now.
   */
  compacted(): number {
    let results = 0;
    for (const segment of this.segments)
      if (segment.kind === "assistant") results += segment.results.size;
    this.segments = [];
    this.openAssistant = undefined;
    this.lastAssistant = undefined;
    return results;
  }

  /** Totals the source reports itself (replacing per-request sums), and its last request. */
  usageTotals(total: Usage, last: Usage | undefined): void {
    this.reportedTotals = { total, last };
  }

  private reportedTotals: { total: Usage; last: Usage | undefined } | undefined;

  /**
   * Usage of one model request; a repeated key replaces the earlier report of that request.
   * With `call` (a request the model answered, not a message the source made up), it is also
   * placed on the assistant message just given its blocks (placeCall).
   */
  usage(key: string, usage: Usage, call?: { readonly model?: string }): void {
    this.usages.delete(key);
    this.usages.set(key, usage);
    this.unplaced.delete(key);
    if (call === undefined) this.placed.delete(key);
    else this.placeCall(key, usage, call.model);
  }

  /**
   * Usage of a model call whose answer the source's history does not hold (the request failed,
   * or its messages were condensed or deleted since): counted in the totals and kept as a call
   * outside the history, so that a target keeping usage per message does not lose it.
   */
  unplacedCall(key: string, usage: Usage, model: string | undefined): void {
    this.usages.delete(key);
    this.usages.set(key, usage);
    this.placed.delete(key);
    this.unplaced.set(key, this.callOf(usage, model));
  }

  private callOf(usage: Usage, model: string | undefined): ImportedCall {
    return {
      usage,
      ...(model === undefined ? {} : { model }),
      ...(this.provider === undefined ? {} : { provider: this.provider }),
    };
  }

  /**
   * Puts the usage of model call `id` on the newest assistant message (the one that ends it,
   * for sources that report a call after its items); placing a call again replaces its usage
   * and moves it to the newest. True when it moved. Calls placed on one message are summed
   * there (a call that wrote no message of the history counts on the one before it).
   */
  placeCall(id: string, usage: Usage, model: string | undefined): boolean {
    const segment = this.lastAssistant;
    const earlier = this.placed.get(id);
    const call = this.callOf(usage, model);
    this.placed.delete(id);
    this.unplaced.delete(id);
    if (segment === undefined) {
      // No assistant message since the start or the last compaction: none ends this call.
      this.unplaced.set(id, call);
      return false;
    }
    this.placed.set(id, { call, segment });
    return earlier !== undefined && earlier.segment !== segment;
  }

  /**
   * The conversation, each call without a result answered with the source tool's own `output`
   * for an interrupted call (an error result) and a notice of kind `interruptedToolResult`
   * saying so (`describe` tells why the call has no result).
   */
  finishInterrupted(
    output: string,
    describe: (call: ToolCallBlock, atEnd: boolean) => string,
  ): BuiltConversation {
    const built = this.finish((call) => ({
      type: "toolResult",
      callID: call.id,
      toolName: call.name,
      isError: true,
      content: output,
    }));
    for (const { call, atEnd } of built.unanswered) {
      built.conversation.items.push({
        id: `interrupted-${call.id}`,
        type: "notice",
        kind: "interruptedToolResult",
        text: describe(call, atEnd),
      });
    }
    return built;
  }

  /**
   * The conversation. A call without a result gets `interrupted(call)` as its result (the
   * result the source tool itself gives an interrupted call) and its tool item is `cancelled`.
   */
  finish(interrupted: (call: ToolCallBlock) => ToolResultBlock): BuiltConversation {
    const history: Message[] = [];
    const unanswered: UnansweredCall[] = [];
    const callsOf = new Map<AssistantSegment, ImportedCall>();
    for (const { call, segment } of this.placed.values()) addCall(callsOf, segment, call);
    const calls = new Map<Message, ImportedCall>();
    // The segments whose calls ended on a message of the history; the others' are outside it.
    const landed = new Set<AssistantSegment>();
    let answer: Message | undefined;
    const lastIndex = this.segments.length - 1;
    this.segments.forEach((segment, index) => {
      if (segment.kind === "user") {
        history.push({ role: "user", content: segment.blocks });
        return;
      }
      const call = callsOf.get(segment);
      if (segment.blocks.length === 0) {
        // A call that wrote no message of the history (thinking only) counts on the one before.
        if (call !== undefined && answer !== undefined) {
          addCall(calls, answer, call);
          landed.add(segment);
        }
        return;
      }
      const message: Message = { role: "assistant", content: segment.blocks };
      history.push(message);
      answer = message;
      if (call !== undefined) {
        addCall(calls, message, call);
        landed.add(segment);
      }
      if (segment.calls.length === 0) return;
      const results = segment.calls.map((call) => {
        const result = segment.results.get(call.id);
        if (result !== undefined) return result;
        unanswered.push({ call, atEnd: index === lastIndex });
        const item = this.toolItems.get(call.id);
        if (item !== undefined) item.status = "cancelled";
        return interrupted(call);
      });
      history.push({ role: "tool", content: results });
      if (segment.resultImages.length > 0) {
        history.push({ role: "user", content: segment.resultImages });
      }
    });
    const usage = { ...ZERO_USAGE };
    let lastRoundUsage: Usage | undefined;
    for (const round of this.usages.values()) {
      usage.input += round.input;
      usage.output += round.output;
      usage.cacheRead += round.cacheRead;
      usage.cacheWrite += round.cacheWrite;
      usage.webSearchRequests += round.webSearchRequests;
      lastRoundUsage = round;
    }
    if (this.reportedTotals !== undefined) {
      Object.assign(usage, this.reportedTotals.total);
      lastRoundUsage = this.reportedTotals.last ?? lastRoundUsage;
    }
    const conversation: SavedConversation = {
      ...emptyConversation(),
      ...(this.provider === undefined ? {} : { provider: this.provider }),
      ...(this.model === undefined ? {} : { model: this.model }),
      items: this.items,
      history,
      usage,
      ...(lastRoundUsage === undefined ? {} : { lastRoundUsage }),
    };
    const outsideCalls = [...this.placed.values()]
      .filter(({ segment }) => !landed.has(segment))
      .map(({ call }) => call);
    outsideCalls.push(...this.unplaced.values());
    return { conversation, images: this.images, unanswered, calls, outsideCalls };
  }
}

/** Adds a call to those of `key` (their usage summed, the model of the newest kept). */
function addCall<K>(calls: Map<K, ImportedCall>, key: K, call: ImportedCall): void {
  const before = calls.get(key);
  calls.set(
    key,
    before === undefined ? call : { ...call, usage: addUsage(before.usage, call.usage) },
  );
}

function addUsage(a: Usage, b: Usage): Usage {
  const oneHour = (a.cacheWrite1h ?? 0) + (b.cacheWrite1h ?? 0);
  const cost =
    a.reportedCost === undefined && b.reportedCost === undefined
      ? undefined
      : (a.reportedCost ?? 0) + (b.reportedCost ?? 0);
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    webSearchRequests: a.webSearchRequests + b.webSearchRequests,
    ...(oneHour === 0 ? {} : { cacheWrite1h: oneHour }),
    ...(cost === undefined ? {} : { reportedCost: cost }),
  };
}
