import { randomUUID } from "node:crypto";
import { VerbatimError } from "../core/errors.js";
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
import type { Block, Message } from "../history/message.js";
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
import { addCost, addEstimatedDollars, addUsage } from "./cost.js";
import { defaultPriceBook } from "./default-prices.js";
import type { PriceBook } from "./prices.js";
import { runProviderRounds, type TurnOutcome } from "./provider-turn.js";
import { heldSections, planSections } from "./sections.js";
import {
  emptyState,
  findItem,
  neverCharged,
  savedFromState,
  stateFromSaved,
  type ConversationState,
} from "./state.js";
import { cancelOpenCalls, openToolCalls } from "./tool-calls.js";
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
    if (openToolCalls(this.state.history) !== undefined && this.pendingApprovalExists()) {
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
    this.charge(provider, model, usage);
    this.state.lastRoundUsage = usage;
    const notice = this.meter.afterRequest(usage, this.current.provider, this.current.model);
    if (notice !== undefined) this.state.items.push({ ...notice, id: this.newId() });
  }
  recordCompactionRound(provider: string, model: string, usage: Usage): void {
    this.charge(provider, model, usage);
    this.state.lastRoundUsage = undefined;
    this.meter.reset();
  }
  recordCliTurn(backend: CliBackend, result: CliTurnResult): void {
    const first = neverCharged(this.state);
    this.state.usage = addUsage(this.state.usage, result.usage);
    this.state.lastRoundUsage = result.usage;
    this.state.estimatedCost = addCost(this.state.estimatedCost, result.cost, first);
    void backend;
  }
  recordGeneratedImages(images: readonly GeneratedImage[]): void {
    for (const image of images) {
      const dollars = this.prices.imageCost(image);
      if (dollars === undefined) continue;
      this.state.estimatedCost = addEstimatedDollars(
        this.state.estimatedCost,
        dollars,
        neverCharged(this.state),
      );
    }
  }
  private charge(provider: string, model: string, usage: Usage): void {
    const first = neverCharged(this.state);
    let cost: Cost;
    if (usage.reportedCost !== undefined) cost = { kind: "reported", dollars: usage.reportedCost };
    else if (!this.prices.billsPerToken(provider)) cost = { kind: "notBilled" };
    else {
      const dollars = this.prices.requestCost(provider, model, usage);
      cost = dollars === undefined ? { kind: "unknown" } : { kind: "estimated", dollars };
    }
    this.state.usage = addUsage(this.state.usage, usage);
    this.state.estimatedCost = addCost(this.state.estimatedCost, cost, first);
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
    const held = restoredTranscript === undefined ? heldSections(this.state.sentFacts) : undefined;
    const plan = planSections(supplied, held);
    this.starting = undefined;
    const item: Item = { id: message.id, type: "user", text: message.text };
    if (message.images !== undefined) item.hasImage = true;
    this.state.items.push(item);
    const blocks: Block[] = [...plan.blocks];
    if (message.text !== "") blocks.push({ type: "text", text: message.text });
    for (const image of message.images ?? []) blocks.push({ type: "image", ...image });
    const userMessage: Message = { role: "user", content: blocks };
    this.state.sentFacts.push(
      plan.record === undefined
        ? { message: this.state.history.length }
        : { message: this.state.history.length, sections: new Map(plan.record) },
    );
    this.state.history.push(userMessage);
    let outcome: TurnOutcome;
    if (backend.kind === "cli") {
      this.cliNeedsTranscript = false;
      const text = blocks
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("\n\n");
      outcome = await runCliTurn(this, backend, control, {
        message: text,
        userMessage,
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
    const index = this.state.queued.findIndex((message) => message.id === queuedId);
    const message = this.state.queued[index];
    if (message === undefined) throw notFound("queued message", queuedId);
    this.state.queued.splice(index, 1);
    this.state.unsent.push(message);
    this.change("returned");
    this.update();
    return message;
  }

  takeUnsent(): PendingMessage[] {
    const taken = this.state.unsent;
    this.state.unsent = [];
    this.update();
    return taken;
  }

  rate(itemId: string, feedback: Feedback | undefined): void {
    if (findItem(this.state.items, itemId) === undefined) throw notFound("item", itemId);
    if (feedback === undefined) this.state.feedback.delete(itemId);
    else this.state.feedback.set(itemId, feedback);
    this.change("rating");
    this.update();
  }

  setSkillCard(itemId: string, state: SkillCard["state"]): void {
    this.requireItem(itemId, "skillProposal");
    this.state.skillCards.set(itemId, { state });
    this.change("cardState");
    this.update();
  }

  setLintRuleCard(itemId: string, state: LintRuleCard["state"]): void {
    this.requireItem(itemId, "lintRuleProposal");
    this.state.lintRuleCards.set(itemId, { state });
    this.change("cardState");
    this.update();
  }

  resolveCard(itemId: string): void {
    if (findItem(this.state.items, itemId) === undefined) throw notFound("item", itemId);
    if (!this.state.resolvedCards.includes(itemId)) this.state.resolvedCards.push(itemId);
    this.change("cardState");
    this.update();
  }

  answerApproval(itemId: string, answer: { approved: boolean; alwaysAllow?: boolean }): void {
    this.requireItem(itemId, "toolApproval");
    const card = this.state.approvalCards.get(itemId);
    if (card !== undefined && card.state !== "pending") {
      throw new VerbatimError(
        "approval_already_answered",
        `the approval ${itemId} was already answered`,
        {
          hint: "Each tool approval is answered once.",
        },
      );
    }
    this.state.approvalCards.set(
      itemId,
      answer.approved
        ? answer.alwaysAllow === true
          ? { state: "approved", alwaysAllow: true }
          : { state: "approved" }
        : { state: "denied" },
    );
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

  private pendingApprovalExists(): boolean {
    for (const card of this.state.approvalCards.values()) if (card.state === "pending") return true;
    return false;
  }

  private requireItem(itemId: string, type: Item["type"]): void {
    const item = findItem(this.state.items, itemId);
    if (item === undefined) throw notFound("item", itemId);
    if (item.type !== type) {
      throw new VerbatimError(
        "invalid_argument",
        `item ${itemId} is a ${item.type}, not a ${type}`,
        {
          where: itemId,
        },
      );
    }
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

function notFound(what: string, id: string): VerbatimError {
  return new VerbatimError("conversation_item_not_found", `no ${what} with id ${id}`, {
    where: id,
    hint: "Pass the id of an item in this conversation.",
  });
}
