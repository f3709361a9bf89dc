/**
 * The tables of background agent jobs (migration 0003), part of `StoreSchema`. JSON columns
 * travel as JSON text; times are ISO 8601 UTC text, as in the rest of the store.
 */

/** One background agent job: owned by a subject, reporting to one gateway conversation. */
export interface BackgroundAgentJobTable {
  readonly id: string;
  readonly subject_uid: string;
  /** The conversation that owns the job and gets its wake event (B11); never written to. */
  readonly conversation_id: string;
  /** queued → running → (queued again for a retry) → succeeded | failed | cancelled. */
  readonly status: string;
  /** How many retries the job may take after its first attempt (B13). */
  readonly retry_budget: number;
  /** Attempts started so far: at most retry_budget + 1. */
  readonly attempts: number;
  /** JSON text: the caller's string pairs. */
  readonly metadata: string;
  /** JSON text: the job's result once ended (what the wake event carries), else null. */
  readonly result: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly ended_at: string | null;
}

/** One turn of a job; `item_count` is the next free position of its item stream. */
export interface BackgroundAgentJobTurnTable {
  readonly id: string;
  readonly subject_uid: string;
  readonly job_id: string;
  /** 0, 1, 2, … within the job. */
  readonly turn_index: number;
  /** The attempt the turn ran in (1-based). */
  readonly attempt: number;
  /** Starts at 1; steering or prompting the turn again raises it (B8). */
  readonly revision: number;
  /** running | completed | failed | cancelled. */
  readonly status: string;
  readonly item_count: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** One item of a turn's append-only stream (SPEC B7): never updated, never deleted (B8). */
export interface BackgroundAgentJobTurnItemTable {
  readonly turn_id: string;
  readonly position: number;
  readonly revision: number;
  /**
   * Unique within the turn and compared in SQL, so it follows the stored-text rule
   * (src/core/stored-text.ts): two lone surrogates would otherwise be stored as one U+FFFD.
   */
  readonly item_key: string;
  /** JSON text: one sanitized semantic item (src/trajectory). */
  readonly item: string;
  readonly subject_uid: string;
  readonly job_id: string;
  readonly created_at: string;
}

/** The outbox of wake events: a job's end, for its owning conversation (B11). */
export interface BackgroundAgentJobWakeEventTable {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly job_id: string;
  /** JSON text: `{job_id, status, attempts, result}`. */
  readonly payload: string;
  readonly created_at: string;
  /** Set once, by the one consumer that claims the event. */
  readonly claimed_at: string | null;
  readonly claimed_by: string | null;
}
