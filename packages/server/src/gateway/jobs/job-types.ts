import type { JsonValue } from "verbatim-llm/core";
import type { StoredTurnItem } from "verbatim-llm/trajectory";

/** queued → running → queued again (a retry) … → succeeded | failed | cancelled. */
export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const JOB_END_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "cancelled"];

export type TurnStatus = "running" | "completed" | "failed" | "cancelled";

/** A background agent job (SPEC B11, B13). */
export interface BackgroundAgentJob {
  readonly id: string;
  readonly subjectUid: string;
  /** The gateway conversation that owns the job and gets its wake event. */
  readonly conversationId: string;
  readonly status: JobStatus;
  /** Retries allowed after the first attempt: at most `retryBudget + 1` attempts. */
  readonly retryBudget: number;
  readonly attempts: number;
  readonly metadata: Readonly<Record<string, string>>;
  /** What the job ended with (the wake event's payload), null while not ended. */
  readonly result: WakePayload | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly endedAt: string | null;
}

export interface JobTurn {
  readonly id: string;
  readonly jobId: string;
  readonly turnIndex: number;
  readonly attempt: number;
  readonly revision: number;
  readonly status: TurnStatus;
  /** How many items the turn holds (its next position). */
  readonly itemCount: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One item to append: a stable key and a semantic item (validated, then sanitized). */
export interface TurnItemInput {
  readonly item_key: string;
  readonly item: unknown;
}

/** The payload of a wake event: the job's result, never its trajectory (B11). */
export interface WakePayload {
  readonly type: "background_agent_job.ended";
  readonly job_id: string;
  readonly status: "succeeded" | "failed" | "cancelled";
  readonly attempts: number;
  /** The job's result when it succeeded, else null. */
  readonly result: JsonValue | null;
  /** Why it failed or was cancelled, else null. */
  readonly error: string | null;
}

export interface WakeEvent {
  readonly id: string;
  readonly subjectUid: string;
  readonly conversationId: string;
  readonly jobId: string;
  readonly payload: WakePayload;
  readonly createdAt: string;
  readonly claimedAt: string | null;
  readonly claimedBy: string | null;
}

/** A job's trajectory as stored: its turns in order and their rows (B7). */
export interface StoredJobTrajectory {
  readonly job: BackgroundAgentJob;
  readonly turns: readonly JobTurn[];
  readonly rows: readonly StoredTurnItem[];
}
