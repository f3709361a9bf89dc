import { randomUUID } from "node:crypto";
import { sha256Hex } from "../core/hash.js";
import type {
  Cost,
  Feedback,
  LintRuleCard,
  PendingMessage,
  SavedConversation,
  SkillCard,
  Usage,
} from "../format/conversation-schema.js";
import type { Item } from "../format/items.js";
import type {
  ChangeKind,
  CompactionPreview,
  CompactionResult,
  LiveConversation,
  LiveConversationOptions,
  NewConversationRequest,
  OutgoingMessage,
  SendResult,
} from "./api.js";
import type { Backend, CliBackend, CliTurnResult } from "./backend.js";
import { previewCompaction, runCompaction } from "./compaction.js";
import { runCliTurn } from "./cli-turn.js";
import { ContextMeter } from "./context-meter.js";
import { chargeCliTurn, chargeGeneratedImages, chargeRequest } from "./accounting.js";
import { defaultPriceBook } from "./default-prices.js";
import type { PriceBook } from "./prices.js";
import { runProviderRounds, type TurnOutcome } from "./provider-turn.js";
import { openTurn } from "./turn-message.js";
import { emptyState, savedFromState, stateFromSaved, type ConversationState } from "./state.js";
import { cancelOpenCalls, openToolCalls } from "./tool-calls.js";
import {
  hasPendingApproval,
  markResolved,
  moveQueuedToUnsent,
  recordApproval,
  setFeedback,
  setLintRuleCardState,
  setSkillCardState,
} from "./cards.js";
import type { GeneratedImage, HostTool } from "./tools.js";
import type { TurnControl, TurnHost } from "./turn-host.js";
import { transcriptText } from "./transcript.js";

/** Options of `createLiveConversation` beyond the public ones: a price book for tests and hosts. */
export interface CreateOptions extends LiveConversationOptions {
  readonly prices?: PriceBook;
}

/** Makes the live conversation a panel holds (docs/conversation.md). */
export function createLiveConversation(options: CreateOptions): LiveConversation {
  return new Conversation(options);
}

function defaultId(): string {
  return randomUUID().toUpperCase();
}

class Conversation implements LiveConversation, TurnHost {
  state: ConversationState;
  readonly tools: readonly HostTool[];
  readonly system: string | undefined;
  imageStore: Map<string, Uint8Array>;
  private notices: Item[];
  private current: Backend;
  private readonly prices: PriceBook;
  private readonly meter: ContextMeter;
  private turn: (TurnControl & { paused: boolean; done: Promise<void> }) | undefined;
  private compacting = false;
  /** The message of a turn that is starting: not yet in history or the panel. */
  private starting: PendingMessage | undefined;
  private epoch = 0;
  /** The next CLI turn must start a new session with the transcript (A25). */
  private cliNeedsTranscript: boolean;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: CreateOptions) {
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
    const notice = this.meter.afterRequest(usage, this.current.provider, this.current.model);
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

  // ---- sending ------------------------------------------------------------------------------
  send(message: OutgoingMessage | string): SendResult {
    const outgoing = typeof message === "string" ? { text: message } : message;
    const pending = this.pending(outgoing);
    if (this.turn !== undefined || this.compacting || this.state.queued.length > 0) {
      this.state.queued.push(pending);
      this.change("queued");
      this.update();
      if (this.turn === undefined && !this.compacting) this.resume();
      return { status: "queued", message: pending };
    }
    return { status: "started", itemId: this.startTurn(pending) };
  }

  /** Starts the first queued message when no turn runs (after reopening, A10a). */
  resume(): boolean {
    if (this.turn !== undefined || this.compacting) return false;
    const next = this.state.queued.shift();
    if (next === undefined) return false;
    this.startTurn(next);
    return true;
  }

  whenIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private idle(): boolean {
    return (this.turn === undefined || this.turn.paused) && !this.compacting;
  }

  private settleWaiters(): void {
    if (!this.idle()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private pending(message: OutgoingMessage): PendingMessage {
    const pending: PendingMessage = { id: this.newId(), text: message.text };
    if (message.images !== undefined && message.images.length > 0) {
      pending.images = message.images.map((image) => {
        const sha256 = sha256Hex(image.bytes);
        this.imageStore.set(sha256, image.bytes);
        return { sha256, mimeType: image.mimeType };
      });
    }
    return pending;
  }

  private newControl(paused: boolean): TurnControl & { paused: boolean; done: Promise<void> } {
    const epoch = this.epoch;
    return {
      controller: new AbortController(),
      alive: () => this.epoch === epoch,
      paused,
      done: Promise.resolve(),
    };
  }

  private startTurn(message: PendingMessage): string {
    const control = this.newControl(false);
    this.turn = control;
    const itemId = message.id;
    this.starting = message;
    this.options.onTurnStarted?.();
    this.update();
    control.done = this.runTurn(control, message).catch((error: unknown) => {
      if (!control.alive()) return;
      if (this.starting === message) {
        // The turn never began (the host's sections failed): the message goes back to the input.
        this.starting = undefined;
        this.state.unsent.push(message);
      }
      const text = error instanceof Error ? error.message : String(error);
      this.state.items.push({ id: this.newId(), type: "failure", message: text });
      this.endTurn(control, "failed");
    });
    return itemId;
  }

  private async runTurn(control: TurnControl & { paused: boolean }, message: PendingMessage) {
    const backend = this.current;
    cancelOpenCalls(this);
    const supplied = this.options.sections === undefined ? [] : await this.options.sections();
    if (!control.alive()) return;
    const restoredTranscript =
      backend.kind === "cli" && this.cliNeedsTranscript
        ? transcriptText(this.state.items)
        : undefined;
    const started = openTurn(this.state, message, supplied, restoredTranscript !== undefined);
    this.starting = undefined;
    let outcome: TurnOutcome;
    if (backend.kind === "cli") {
      this.cliNeedsTranscript = false;
      outcome = await runCliTurn(this, backend, control, {
        message: started.text,
        userMessage: started.userMessage,
        ...(restoredTranscript === undefined ? {} : { restoredTranscript }),
      });
    } else {
      outcome = await runProviderRounds(this, backend, control);
    }
    this.afterRounds(control, outcome, backend);
  }

  private afterRounds(
    control: TurnControl & { paused: boolean },
    outcome: TurnOutcome,
    backend: Backend,
  ): void {
    if (!control.alive()) return;
    if (outcome === "paused") {
      control.paused = true;
      this.update();
      this.settleWaiters();
      return;
    }
    if (outcome === "cancelled") cancelOpenCalls(this);
    this.state.provider = backend.provider;
    this.state.model = backend.model;
    this.endTurn(control, outcome);
  }

  private endTurn(control: TurnControl, outcome: TurnOutcome): void {
    if (this.turn === control) this.turn = undefined;
    this.change("turnEnd");
    if ((outcome === "cancelled" || outcome === "failed") && this.state.queued.length > 0) {
      this.state.unsent.push(...this.state.queued);
      this.state.queued = [];
      this.change("returned");
    }
    this.update();
    if (!this.resume()) this.settleWaiters();
  }

  cancel(): void {
    const turn = this.turn;
    if (turn === undefined) return;
    if (turn.paused) {
      cancelOpenCalls(this);
      turn.paused = false;
      this.state.provider = this.current.provider;
      this.state.model = this.current.model;
      this.endTurn(turn, "cancelled");
      return;
    }
    turn.controller.abort();
  }

  // ---- the input box, ratings, cards --------------------------------------------------------
  returnToInput(queuedId: string): PendingMessage {
    const message = moveQueuedToUnsent(this.state, queuedId);
    this.changed("returned");
    return message;
  }

  takeUnsent(): PendingMessage[] {
    const taken = this.state.unsent;
    this.state.unsent = [];
    this.update();
    return taken;
  }

  rate(itemId: string, feedback: Feedback | undefined): void {
    setFeedback(this.state, itemId, feedback);
    this.changed("rating");
  }

  setSkillCard(itemId: string, state: SkillCard["state"]): void {
    setSkillCardState(this.state, itemId, state);
    this.changed("cardState");
  }

  setLintRuleCard(itemId: string, state: LintRuleCard["state"]): void {
    setLintRuleCardState(this.state, itemId, state);
    this.changed("cardState");
  }

  resolveCard(itemId: string): void {
    markResolved(this.state, itemId);
    this.changed("cardState");
  }

  private changed(kind: ChangeKind): void {
    this.change(kind);
    this.update();
  }

  answerApproval(itemId: string, answer: { approved: boolean; alwaysAllow?: boolean }): void {
    recordApproval(this.state, itemId, answer);
    this.change("cardState");
    this.update();
    const turn = this.turn;
    if (turn === undefined || !turn.paused) return;
    turn.paused = false;
    const backend = this.current;
    turn.done = (async () => {
      const outcome =
        backend.kind === "provider" ? await runProviderRounds(this, backend, turn) : "ended";
      this.afterRounds(turn, outcome, backend);
    })().catch((error: unknown) => {
      if (!turn.alive()) return;
      const text = error instanceof Error ? error.message : String(error);
      this.state.items.push({ id: this.newId(), type: "failure", message: text });
      this.endTurn(turn, "failed");
    });
  }

  // ---- new conversation, switching, compaction ---------------------------------------------
  requestNewConversation(): NewConversationRequest {
    const needsConfirmation = this.state.items.length > 0 || this.notices.length > 0;
    return { needsConfirmation, confirm: () => this.resetConversation() };
  }

  private resetConversation(): void {
    const turn = this.turn;
    this.epoch += 1;
    turn?.controller.abort();
    this.turn = undefined;
    this.compacting = false;
    this.starting = undefined;
    this.state = emptyState();
    this.imageStore = new Map();
    this.notices = [];
    this.cliNeedsTranscript = false;
    this.meter.reset();
    if (this.current.kind === "cli") this.current.reset?.();
    this.options.onNewConversationConfirmed?.();
    this.change("newConversation");
    this.update();
    this.settleWaiters();
  }

  switchBackend(backend: Backend): void {
    if (backend === this.current) return;
    if (this.current.kind === "cli") this.current.reset?.();
    this.current = backend;
    if (backend.kind === "cli") this.cliNeedsTranscript = this.state.items.length > 0;
    this.update();
  }

  compactionPreview(): CompactionPreview {
    return previewCompaction({
      history: this.state.history,
      sentFacts: this.state.sentFacts,
      lastRoundUsage: this.state.lastRoundUsage,
      provider: this.current.provider,
      model: this.current.model,
      running: this.turn !== undefined || this.compacting,
      backendKind: this.current.kind,
      prices: this.prices,
    });
  }

  async compact(): Promise<CompactionResult> {
    const preview = this.compactionPreview();
    const backend = this.current;
    if (!preview.available || backend.kind !== "provider") {
      return { ok: false, reason: `Compaction is not available (${preview.reason ?? "unknown"}).` };
    }
    this.compacting = true;
    const control = this.newControl(false);
    try {
      return await runCompaction(this, backend, control);
    } finally {
      if (control.alive()) {
        this.compacting = false;
        if (!this.resume()) this.settleWaiters();
      }
    }
  }
}
