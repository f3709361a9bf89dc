/**
 * The public shape of a live conversation: what a host application holds while its agent panel
 * is open (docs/conversation.md). `createLiveConversation()` (live-conversation.ts) makes one.
 */
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
import type { Backend } from "./backend.js";
import type { HostTool } from "./tools.js";

/** A named piece of context a turn carries in its own message (A9), e.g. a design system. */
export interface ContextSection {
  readonly name: string;
  readonly content: string;
}

/** The conversation changes that fire the no-undo change hook (A5), and only these. */
export type ChangeKind =
  "turnEnd" | "rating" | "cardState" | "queued" | "returned" | "newConversation" | "compaction";

export interface OutgoingMessage {
  readonly text: string;
  readonly images?: readonly { readonly bytes: Uint8Array; readonly mimeType: string }[];
}

export interface LiveConversationOptions {
  readonly backend: Backend;
  readonly tools?: readonly HostTool[];
  /** The system prompt; constant across turns so that the cached prefix holds (A27). */
  readonly system?: string;
  /**
   * The context sections for the turn about to start (A9), asked at every turn start. The
   * conversation decides which to send (changed, or no longer with the model) and records it
   * in `sentFacts`: the host never tracks this itself.
   */
  readonly sections?: () => readonly ContextSection[] | Promise<readonly ContextSection[]>;
  /** What to restore (A10a): the archive's conversation and images. Never fires the hook. */
  readonly restore?: {
    readonly conversation: SavedConversation;
    readonly images: ReadonlyMap<string, Uint8Array>;
    /** Notices the archive produced on open (A14); shown first, never saved. */
    readonly notices?: readonly Item[];
  };
  /** The no-undo change hook (A5): mark the document edited. */
  readonly onChange?: (change: ChangeKind) => void;
  /** The keep-conversation setting (A17), read at each change; off → the hook never fires. */
  readonly keepConversation?: () => boolean;
  /** A turn is starting (the archive then replaces an unreadable folder, A14). */
  readonly onTurnStarted?: () => void;
  /** A new conversation was confirmed (the archive then deletes an unreadable folder, A14). */
  readonly onNewConversationConfirmed?: () => void;
  /** Anything visible changed (streamed text, items, running state): redraw the panel. */
  readonly onUpdate?: () => void;
  /** Fresh item and message ids (default: random UUIDs in upper case, as the seed shows). */
  readonly newId?: () => string;
}

export type SendResult =
  | { readonly status: "started"; readonly itemId: string }
  | { readonly status: "queued"; readonly message: PendingMessage };

export interface CompactionPreview {
  readonly available: boolean;
  /** Why not, when not available. */
  readonly reason?: "turnRunning" | "tooFewTurns" | "cliBackend";
  /** The input to be sent: the last request's total input, else history characters ÷ 4. */
  readonly inputTokens: number;
  /** Priced as input tokens from the price table; `notBilled`/`unknown` carry no dollars. */
  readonly estimatedCost: Cost;
}

export type CompactionResult =
  { readonly ok: true; readonly summary: string } | { readonly ok: false; readonly reason: string };

/** A request to start a new conversation; nothing happens until `confirm()` (A14). */
export interface NewConversationRequest {
  /** True when something would be lost (items, or an unreadable saved folder kept on disk). */
  readonly needsConfirmation: boolean;
  confirm(): void;
}

export interface LiveConversation {
  /** The panel: notices from opening, then the conversation's items. */
  readonly items: readonly Item[];
  /** Everything format 1 saves, as it stands (pass to `archive.save`). */
  snapshot(): SavedConversation;
  /** The image bytes the history refers to, by SHA-256. */
  images(): Map<string, Uint8Array>;
  readonly running: boolean;
  /** A turn is paused on a pending tool approval. */
  readonly awaitingApproval: boolean;
  readonly backend: Backend;
  /** The current model's context window in tokens, when the table knows it. */
  contextWindow(): number | undefined;

  /** Starts a turn, or queues the message while one runs (A6 `queued`). */
  send(message: OutgoingMessage | string): SendResult;
  /** Starts the first queued message when no turn runs (after reopening); false if none. */
  resume(): boolean;
  /** Resolves when no turn runs and no queued message waits (or a turn awaits approval). */
  whenIdle(): Promise<void>;
  /** Cancels the running turn; history stays consistent (every tool call has its result). */
  cancel(): void;
  /** Moves a queued message back to the input box (A6 `unsent`). */
  returnToInput(queuedId: string): PendingMessage;
  /** Hands the returned messages to the host's input box and forgets them. */
  takeUnsent(): PendingMessage[];
  /** Rates the turn that `itemId` ends; `undefined` clears the rating. */
  rate(itemId: string, feedback: Feedback | undefined): void;
  setSkillCard(itemId: string, state: SkillCard["state"]): void;
  setLintRuleCard(itemId: string, state: LintRuleCard["state"]): void;
  /** Answers a pending tool approval; the paused turn goes on (also after reopening). */
  answerApproval(
    itemId: string,
    answer: { readonly approved: boolean; readonly alwaysAllow?: boolean },
  ): void;
  resolveCard(itemId: string): void;
  requestNewConversation(): NewConversationRequest;
  /** Switches provider or model (A24): used from the next turn, recorded at its end. */
  switchBackend(backend: Backend): void;
  compactionPreview(): CompactionPreview;
  compact(): Promise<CompactionResult>;
  /** Usage and cost so far (the same values the snapshot holds). */
  readonly usage: Usage;
  readonly lastRoundUsage: Usage | undefined;
  readonly estimatedCost: Cost;
}
