import type { Usage } from "../format/conversation-schema.js";
import type { Message } from "../history/message.js";
import type { ChangeKind } from "./api.js";
import type { ConversationState } from "./state.js";
import type { GeneratedImage, HostTool } from "./tools.js";

/** What the turn loop needs of the live conversation that runs it. */
export interface TurnHost {
  readonly state: ConversationState;
  readonly tools: readonly HostTool[];
  readonly system: string | undefined;
  /** Image bytes by SHA-256 (history, queued and returned messages). */
  readonly imageStore: Map<string, Uint8Array>;
  newId(): string;
  /** Something visible changed. */
  update(): void;
  change(kind: ChangeKind): void;
  /** Records one request's usage: totals, last-round usage, cost, context notice. */
  recordRound(provider: string, model: string, usage: Usage): void;
  /**
   * Records a request that compacted the conversation (A20, or the provider's own): totals and
   * cost; the context shrank, so no last-round usage and no context notice from it.
   */
  recordCompactionRound(provider: string, model: string, usage: Usage): void;
  /** Adds generated images' cost (A8). */
  recordGeneratedImages(images: readonly GeneratedImage[]): void;
}

/** Where a round's compaction summary sits: `message.content[block]` is its text block. */
export interface ProviderSummary {
  readonly message: Message;
  readonly block: number;
  readonly summary: string;
}

/** One running turn: its abort signal, and whether it still owns the state. */
export interface TurnControl {
  readonly controller: AbortController;
  /** False once a new conversation replaced the state this turn was writing. */
  alive(): boolean;
  /** The turn's latest provider compaction summary, applied to the history when the turn ends. */
  providerSummary?: ProviderSummary;
}
