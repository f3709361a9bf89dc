import type {
  Feedback,
  LintRuleCard,
  PendingMessage,
  SkillCard,
} from "../format/conversation-schema.js";
import type {
  ChangeKind,
  CompactionPreview,
  CompactionResult,
  LiveConversation,
  NewConversationRequest,
  OutgoingMessage,
  SendResult,
} from "./api.js";
import { VerbatimError } from "../core/errors.js";
import type { Backend } from "./backend.js";
import { previewCompaction, runCompaction } from "./compaction.js";
import { runCliTurn } from "./cli-turn.js";
import { ConversationBase, type CreateOptions } from "./conversation-base.js";
import { applyProviderSummary } from "./provider-summary.js";
import { runProviderRounds, type TurnOutcome } from "./provider-turn.js";
import { openTurn, pendingMessage } from "./turn-message.js";
import { emptyState } from "./state.js";
import { cancelOpenCalls } from "./tool-calls.js";
import {
  markResolved,
  moveQueuedToUnsent,
  recordApproval,
  setFeedback,
  setLintRuleCardState,
  setSkillCardState,
} from "./cards.js";
import type { TurnControl } from "./turn-host.js";
import { transcriptText } from "./transcript.js";

export type { CreateOptions } from "./conversation-base.js";

/** Makes the live conversation a panel holds (docs/conversation.md). */
export function createLiveConversation(options: CreateOptions): LiveConversation {
  return new Conversation(options);
}

/** The operations of the live conversation: sending, the turn loop, cards, compaction. */
class Conversation extends ConversationBase implements LiveConversation {
  // ---- sending ------------------------------------------------------------------------------
  send(message: OutgoingMessage | string): SendResult {
    const outgoing = typeof message === "string" ? { text: message } : message;
    if (outgoing.text.trim() === "" && (outgoing.images ?? []).length === 0) {
      throw new VerbatimError("invalid_argument", "the message is empty", {
        where: "send()",
        hint: "Send some text or at least one image.",
      });
    }
    const pending = pendingMessage(this.newId(), outgoing, this.imageStore);
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

  /** Runs a turn's work; an unexpected error ends the turn with a failure item. */
  private guard(control: TurnControl, work: Promise<void>, message?: PendingMessage): void {
    work.catch((error: unknown) => {
      if (!control.alive()) return;
      if (message !== undefined && this.starting === message) {
        // The turn never began (the host's sections failed): the message goes back to the input.
        this.starting = undefined;
        this.state.unsent.push(message);
      }
      const text = error instanceof Error ? error.message : String(error);
      this.state.items.push({ id: this.newId(), type: "failure", message: text });
      this.endTurn(control, "failed");
    });
  }

  private startTurn(message: PendingMessage): string {
    const control = this.newControl(false);
    this.turn = control;
    const itemId = message.id;
    this.starting = message;
    this.options.onTurnStarted?.();
    this.update();
    this.guard(control, this.runTurn(control, message), message);
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
    const summary = control.providerSummary;
    if (summary !== undefined && control.alive() && applyProviderSummary(this.state, summary)) {
      this.change("compaction");
    }
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
    const resumeTurn = async () => {
      const outcome =
        backend.kind === "provider" ? await runProviderRounds(this, backend, turn) : "ended";
      this.afterRounds(turn, outcome, backend);
    };
    this.guard(turn, resumeTurn());
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
