/**
 * The backend a live conversation runs its turns on, in place of calling the provider layer
 * directly. There are two kinds:
 *
 * - **provider** (`kind: "provider"`): the built-in backend over the provider layer. The
 *   conversation owns the turn loop: it renders the history into one request per *round*
 *   (`round()`), streams the answer into panel items, runs the model's tool calls through the
 *   host's tools (with the approval step), appends the results and calls `round()` again until
 *   the model stops. The backend does exactly one model request per `round()` call and never
 *   touches the conversation state. `providerBackend()` (provider-backend.ts) builds one from the
 *   provider layer; tests may pass any object of this shape.
 *
 * - **cli** (`kind: "cli"`): an agent CLI (Claude Code, Codex) that runs a whole turn itself,
 *   with its own tools and its own context (so compaction is not offered, A22). The
 *   conversation calls `runTurn()` once per turn with the turn's usual message; on the first
 *   turn after the conversation was reopened (and on the first turn after switching to this
 *   backend in a conversation that already has items) it also passes `restoredTranscript`
 *   (`transcriptText(items)`, A25): the backend must then start a new session and send
 *   `restoredSessionMessage(restoredTranscript, message)` as the CLI's message. The preamble
 *   goes to the CLI only: the backend reports as history only the turn's user message (given
 *   to it as `userMessage`) and the final assistant text.
 *
 * Both kinds are cancelled with the `AbortSignal` they receive. On cancel a backend returns (or
 * throws) promptly; the conversation keeps what was produced consistent.
 */
import type { Citation, Item } from "../format/items.js";
import type { Usage } from "../format/conversation-schema.js";
import type { ImageBytesLookup, Message } from "../history/message.js";
import type { ModelImage, StopReason, ToolDefinition } from "../providers/types.js";

export type Backend = ProviderBackend | CliBackend;

// ---------------------------------------------------------------------------------------------
// Provider backend: one model request per round.

export interface ProviderBackend {
  readonly kind: "provider";
  /** Provider id as the price and context tables name it (`anthropic`, `openai`, …). */
  readonly provider: string;
  readonly model: string;
  /** One model request: render `history`, send it, stream the answer, parse it. */
  round(request: BackendRoundRequest): Promise<BackendRoundResult>;
}

export interface BackendRoundRequest {
  /** The system prompt (constant for a conversation; context sections never go here, A9). */
  readonly system: string | undefined;
  /** The whole history to send, exactly as it will be recorded. */
  readonly history: readonly Message[];
  /**
   * Where the running turn starts in `history`. Provider material kept in memory for the
   * running turn (thinking signatures, A23) is sent only with messages at or after it.
   */
  readonly turnStart: number;
  readonly images: ImageBytesLookup;
  /** Tools offered to the model; empty for the compaction call. */
  readonly tools: readonly ToolDefinition[];
  readonly signal: AbortSignal;
  /** Streamed parts of the answer, as they arrive (for the panel). */
  readonly onEvent: (event: BackendRoundEvent) => void;
}

/** What a round streams while it runs. Deltas of one kind in a row append to one panel item. */
export type BackendRoundEvent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly text: string }
  | { readonly type: "toolCall"; readonly id: string; readonly name: string }
  | {
      readonly type: "webSearch";
      readonly query: string;
      readonly results: readonly { readonly title: string; readonly url: string }[];
      /** The results as the provider gave them in text, when not split into title and url. */
      readonly detail?: string;
    };

export interface BackendRoundResult {
  /**
   * The assistant message to append to history: provider-independent (A23: text, tool calls;
   * web search results as text; never thinking signatures). May be empty of blocks.
   */
  readonly message: Message;
  readonly usage: Usage;
  /**
   * Why the model stopped, in the providers' words (one vocabulary, `StopReason` of
   * verbatim/providers). The loop continues while the message holds tool calls.
   */
  readonly stopReason: StopReason;
  /** The exact request body sent (logs, tests of A26/A27). */
  readonly requestBody?: Uint8Array;
  /** The bytes of the message's images the model generated: stored beside the history. */
  readonly images?: readonly ModelImage[];
  /** The sources the round's text cites: kept on its assistant panel item (format 1). */
  readonly citations?: readonly Citation[];
  /** Set when the provider compacted the conversation in this round (server-side compaction). */
  readonly compaction?: RoundCompaction;
}

/**
 * A provider's own compaction of the conversation, as a round reports it.
 *
 * - `summary` (Anthropic `compaction` block): `message.content[block]` is the summary's text
 *   block. The provider ignores everything before it from now on; when the turn ends the
 *   conversation replaces all of that with the summary (A20's form), so every later request
 *   carries the summary and none of what it replaced.
 * - `encrypted` (OpenAI Responses `compaction` item): opaque. The backend keeps the item in
 *   memory and sends it back with every later request while the conversation stays open; it is
 *   never saved (A23).
 */
export type RoundCompaction =
  | { readonly kind: "summary"; readonly block: number; readonly summary: string }
  | { readonly kind: "encrypted" };

// ---------------------------------------------------------------------------------------------
// CLI backend: a whole turn per call.

export interface CliBackend {
  readonly kind: "cli";
  /** What `provider` records for turns on this backend (for example `claude-code`, `codex`). */
  readonly provider: string;
  readonly model: string;
  runTurn(input: CliTurnInput): Promise<CliTurnResult>;
  /** Forget the CLI session (new conversation, backend switched away). */
  reset?(): void;
}

export interface CliTurnInput {
  /** The turn's usual message text (what a provider turn would send as the user's text). */
  readonly message: string;
  /** The user message as history records it: report it back first in `history`. */
  readonly userMessage: Message;
  readonly images: ImageBytesLookup;
  /**
   * Present on the first turn after reopening: the restored transcript (`transcriptText`).
   * Start a new session and send `restoredSessionMessage(restoredTranscript, message)`.
   */
  readonly restoredTranscript?: string;
  readonly signal: AbortSignal;
  /** Adds a panel item, or replaces the one with the same id (streamed progress). */
  readonly onItem: (item: Item) => void;
  /** A fresh panel item id. */
  readonly newItemId: () => string;
}

/** The cost a CLI reports: its own dollars, or none because it runs on a subscription. */
export type CliCost =
  | { readonly kind: "reported"; readonly dollars: number }
  | { readonly kind: "notBilled" }
  | { readonly kind: "unknown" };

export interface CliTurnResult {
  /**
   * Messages to append to history: the `userMessage` it was given, then the final assistant
   * text (never the preamble, never intermediate CLI steps). Empty when the turn failed before
   * the CLI started.
   */
  readonly history: readonly Message[];
  readonly usage: Usage;
  readonly cost: CliCost;
  /** Set when the turn failed (missing binary, non-zero exit, malformed output): stderr etc. */
  readonly failure?: string;
  /** True when the turn ended because the signal was aborted. */
  readonly cancelled?: boolean;
}

/** How many trailing characters of the transcript a restored CLI session gets (A25). */
export const CLI_TRANSCRIPT_LIMIT = 20_000;

/**
 * The message a CLI session started after reopening gets (A25): `# Conversation so far`, a
 * newline, the last 20,000 characters of the transcript, a blank line, the usual message.
 * Characters are UTF-16 code units; a cut never splits a surrogate pair.
 */
export function restoredSessionMessage(transcript: string, message: string): string {
  let start = Math.max(0, transcript.length - CLI_TRANSCRIPT_LIMIT);
  const first = transcript.charCodeAt(start);
  if (start > 0 && first >= 0xdc00 && first <= 0xdfff) start += 1;
  return `# Conversation so far\n${transcript.slice(start)}\n\n${message}`;
}
