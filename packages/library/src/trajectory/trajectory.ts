import type { ChatMLMessage } from "../history/chatml.js";

/** The trajectory-level bounded-content facts, kept visible in every projection (B12). */
export interface TrajectoryMetadata {
  /** True when any item had a secret redacted. */
  readonly redacted: boolean;
  /** True when any content was cut: by the runtime before storing, or to fit a page. */
  readonly content_truncated: boolean;
}

/** One turn's share of a projected message list, in order. */
export interface ChatMLTurnSpan {
  /** The job turn's id; absent for turns of a gateway conversation (split at user messages). */
  readonly turn_id?: string;
  /** How many consecutive messages of `messages` belong to the turn (0 for an empty turn). */
  readonly message_count: number;
}

/** Stored items or gateway messages projected to canonical ChatML (B9, B15). */
export interface ChatMLTrajectory {
  readonly messages: readonly ChatMLMessage[];
  readonly metadata: TrajectoryMetadata;
  readonly turns: readonly ChatMLTurnSpan[];
}

/** What the model sees (B12): ChatML messages without stored identity, and the facts. */
export interface ModelVisibleTrajectory {
  readonly messages: readonly ChatMLMessage[];
  readonly metadata: TrajectoryMetadata;
}

/** A projection's messages and facts: what paging works on. */
export interface ProjectedMessages {
  readonly messages: readonly ChatMLMessage[];
  readonly metadata: TrajectoryMetadata;
}
