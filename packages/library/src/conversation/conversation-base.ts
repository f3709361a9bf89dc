import { randomUUID } from "node:crypto";
import type {
  Cost,
  PendingMessage,
  SavedConversation,
  Usage,
} from "../format/conversation-schema.js";
import type { Item } from "../format/items.js";
import type { ChangeKind, LiveConversationOptions } from "./api.js";
import type { Backend, CliBackend, CliTurnResult } from "./backend.js";
import { ContextMeter } from "./context-meter.js";
import { chargeCliTurn, chargeGeneratedImages, chargeRequest } from "./accounting.js";
import { hasPendingApproval } from "./cards.js";
import { defaultPriceBook } from "./default-prices.js";
import type { PriceBook } from "./prices.js";
import { emptyState, savedFromState, stateFromSaved, type ConversationState } from "./state.js";
import { openToolCalls } from "./tool-calls.js";
import type { GeneratedImage, HostTool } from "./tools.js";
import type { TurnControl, TurnHost } from "./turn-host.js";

/** Options of `createLiveConversation` beyond the public ones: a price book for tests and hosts. */
export interface CreateOptions extends LiveConversationOptions {
  readonly prices?: PriceBook;
}

function defaultId(): string {
  return randomUUID().toUpperCase();
}

/**
 * The state half of the live conversation: the fields, what a panel reads, and what the turn
 * loop records (usage, cost, the context notice). `Conversation` adds the operations.
 */
export abstract class ConversationBase implements TurnHost {
  state: ConversationState;
  readonly tools: readonly HostTool[];
  readonly system: string | undefined;
  imageStore: Map<string, Uint8Array>;
  protected notices: Item[];
  protected current: Backend;
  protected readonly prices: PriceBook;
  protected readonly meter: ContextMeter;
  protected turn: (TurnControl & { paused: boolean }) | undefined;
  protected compacting = false;
  /** The message of a turn that is starting: not yet in history or the panel. */
  protected starting: PendingMessage | undefined;
  protected epoch = 0;
  /** The next CLI turn must start a new session with the transcript (A25). */
  protected cliNeedsTranscript: boolean;
  protected waiters: (() => void)[] = [];

  constructor(protected readonly options: CreateOptions) {
    this.tools = options.tools ?? [];
    this.system = options.system;
    this.prices = options.prices ?? defaultPriceBook;
    this.current = options.backend;
    const restore = options.restore;
    this.state = restore === undefined ? emptyState() : stateFromSaved(restore.conversation);
    this.imageStore = new Map(restore?.images ?? []);
    this.notices = [...(restore?.notices ?? [])];
    this.cliNeedsTranscript = this.state.items.length > 0;
    this.meter = new ContextMeter(this.prices);
    this.meter.restore(this.state.lastRoundUsage, this.current.provider, this.current.model);
    if (openToolCalls(this.state.history) !== undefined && hasPendingApproval(this.state)) {
      this.turn = this.newControl(true);
    }
  }

  protected newControl(paused: boolean): TurnControl & { paused: boolean } {
    const epoch = this.epoch;
    return { controller: new AbortController(), alive: () => this.epoch === epoch, paused };
  }

  // ---- reading ------------------------------------------------------------------------------
  get items(): readonly Item[] {
    return this.notices.length === 0 ? this.state.items : [...this.notices, ...this.state.items];
  }
  get running(): boolean {
    return this.turn !== undefined && !this.turn.paused;
  }
  get awaitingApproval(): boolean {
    return this.turn?.paused === true;
  }
  get backend(): Backend {
    return this.current;
  }
  get usage(): Usage {
    return this.state.usage;
  }
  get lastRoundUsage(): Usage | undefined {
    return this.state.lastRoundUsage;
  }
  get estimatedCost(): Cost {
    return this.state.estimatedCost;
  }
  snapshot(): SavedConversation {
    const saved = savedFromState(this.state);
    // A message whose turn is starting (its sections still being gathered) is saved as waiting.
    if (this.starting !== undefined) saved.queued.unshift(this.starting);
    return saved;
  }
  images(): Map<string, Uint8Array> {
    return new Map(this.imageStore);
  }
  contextWindow(): number | undefined {
    return this.prices.contextWindow(this.current.provider, this.current.model);
  }

  // ---- TurnHost -----------------------------------------------------------------------------
  newId(): string {
    return (this.options.newId ?? defaultId)();
  }
  update(): void {
    this.options.onUpdate?.();
  }
  change(kind: ChangeKind): void {
    if (this.options.keepConversation?.() === false) return;
    this.options.onChange?.(kind);
  }
  recordRound(provider: string, model: string, usage: Usage): void {
    chargeRequest(this.state, this.prices, provider, model, usage);
    this.state.lastRoundUsage = usage;
    const notice = this.meter.afterRequest(usage, provider, model);
    if (notice !== undefined) this.state.items.push({ ...notice, id: this.newId() });
  }
  recordCompactionRound(provider: string, model: string, usage: Usage): void {
    chargeRequest(this.state, this.prices, provider, model, usage);
    this.state.lastRoundUsage = undefined;
    this.meter.reset();
  }
  recordCliTurn(_backend: CliBackend, result: CliTurnResult): void {
    chargeCliTurn(this.state, result.usage, result.cost);
  }
  recordGeneratedImages(images: readonly GeneratedImage[]): void {
    chargeGeneratedImages(this.state, this.prices, images);
  }
}
