import type { Usage } from "../format/conversation-schema.js";
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
  /** Adds generated images' cost (A8). */
  recordGeneratedImages(images: readonly GeneratedImage[]): void;
}

/** One running turn: its abort signal, and whether it still owns the state. */
export interface TurnControl {
  readonly controller: AbortController;
  /** False once a new conversation replaced the state this turn was writing. */
  alive(): boolean;
}
