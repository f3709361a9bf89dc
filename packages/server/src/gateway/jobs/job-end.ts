import type { Kysely } from "kysely";
import type { JsonValue } from "verbatim-llm/core";
import { isStorableText } from "verbatim-llm/internal";
import {
  closeRunningTurnRows,
  updateJob,
  type JobRow,
} from "../../store/repositories/background-jobs.js";
import { z } from "zod";
import type { StoreDatabase } from "../../store/database.js";
import {
  claimWakeEventRows,
  insertWakeEvent,
} from "../../store/repositories/background-job-wake-events.js";
import { inTransaction } from "../../store/transaction.js";
import { checkStoredText, idSchema, parseOrThrow, subjectSchema } from "../validation/checks.js";
import type { StoreSchema } from "../../store/schema.js";
import { newId } from "../ids.js";
import { jobFromRow, wakeEventFromRow } from "./job-rows.js";
import type { BackgroundAgentJob, TurnStatus, WakeEvent, WakePayload } from "./job-types.js";

/** Ends the turns still running in a job that stops or retries. */
export async function closeRunningTurns(
  db: Kysely<StoreSchema>,
  job: JobRow,
  now: string,
  status: TurnStatus,
): Promise<void> {
  await closeRunningTurnRows(db, job.subject_uid, job.id, status, now);
}

/**
 * Ends a job and, in the same transaction, puts its wake event in the outbox (B11): the
 * payload carries the result for the owning conversation, never the trajectory.
 */
export async function endJob(
  db: Kysely<StoreSchema>,
  job: JobRow,
  now: string,
  status: WakePayload["status"],
  result: JsonValue | null,
  error: string | null,
): Promise<BackgroundAgentJob> {
  const payload: WakePayload = {
    type: "background_agent_job.ended",
    job_id: job.id,
    status,
    attempts: job.attempts,
    result,
    error,
  };
  const changes = { status, result: JSON.stringify(payload), updated_at: now, ended_at: now };
  await updateJob(db, job.subject_uid, job.id, changes);
  await insertWakeEvent(db, {
    id: newId("wake"),
    subject_uid: job.subject_uid,
    conversation_id: job.conversation_id,
    job_id: job.id,
    payload: JSON.stringify(payload),
    created_at: now,
    claimed_at: null,
    claimed_by: null,
  });
  return jobFromRow({ ...job, ...changes });
}

export interface WakeClaim {
  /** Who claims: recorded on the events as `claimed_by`. */
  readonly consumer: string;
  /** At most this many events (default 100, at most 1000). */
  readonly limit?: number;
  /** Only events for this conversation (of the subject). */
  readonly conversationId?: string;
}

/**
 * Claims the subject's unclaimed wake events (optionally one conversation's), oldest first,
 * each exactly once across consumers (B11). A claim is one subject's, never every subject's:
 * whoever wakes a conversation knows whose it is, and a per-subject claim stays on the one
 * partition that holds the subject's events (store/subject-keys.ts).
 */
export async function claimWakeEvents(
  database: StoreDatabase,
  subjectUid: string,
  input: WakeClaim,
  now: string,
): Promise<WakeEvent[]> {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const consumer = parseOrThrow(idSchema, input.consumer, "consumer");
  checkStoredText(consumer, "consumer");
  if (input.conversationId !== undefined && !isStorableText(input.conversationId)) return [];
  const limit = parseOrThrow(z.int().min(1).max(1000), input.limit ?? 100, "limit");
  const rows = await inTransaction(database, (db) =>
    claimWakeEventRows(db, database.capabilities, {
      subjectUid: subject,
      consumer,
      limit,
      now,
      ...(input.conversationId === undefined ? {} : { conversationId: input.conversationId }),
    }),
  );
  return rows.map(wakeEventFromRow);
}
