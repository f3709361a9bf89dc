import { z } from "zod";
import type { BackgroundAgentJob, JobTurn, WakeEvent } from "./job-types.js";

/** Jobs, turns, items and wake events as the HTTP API shows them (snake_case, B7 names). */
export const jobReplySchema = z.object({
  id: z.string(),
  subject_uid: z.string(),
  conversation_id: z.string(),
  status: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]),
  retry_budget: z.int(),
  attempts: z.int(),
  metadata: z.record(z.string(), z.string()),
  result: z.unknown().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  ended_at: z.string().nullable(),
});

export const turnReplySchema = z.object({
  id: z.string(),
  job_id: z.string(),
  turn_index: z.int(),
  attempt: z.int(),
  revision: z.int(),
  status: z.enum(["running", "completed", "failed", "cancelled"]),
  item_count: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const storedItemSchema = z.object({
  turn_id: z.string(),
  position: z.int(),
  revision: z.int(),
  item_key: z.string(),
  item: z.record(z.string(), z.unknown()),
});

export const wakeEventReplySchema = z.object({
  id: z.string(),
  subject_uid: z.string(),
  conversation_id: z.string(),
  job_id: z.string(),
  payload: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  claimed_at: z.string().nullable(),
  claimed_by: z.string().nullable(),
});

export function jobReply(job: BackgroundAgentJob): z.infer<typeof jobReplySchema> {
  return {
    id: job.id,
    subject_uid: job.subjectUid,
    conversation_id: job.conversationId,
    status: job.status,
    retry_budget: job.retryBudget,
    attempts: job.attempts,
    metadata: { ...job.metadata },
    result: job.result,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    ended_at: job.endedAt,
  };
}

export function turnReply(turn: JobTurn): z.infer<typeof turnReplySchema> {
  return {
    id: turn.id,
    job_id: turn.jobId,
    turn_index: turn.turnIndex,
    attempt: turn.attempt,
    revision: turn.revision,
    status: turn.status,
    item_count: turn.itemCount,
    created_at: turn.createdAt,
    updated_at: turn.updatedAt,
  };
}

export function wakeEventReply(event: WakeEvent): z.infer<typeof wakeEventReplySchema> {
  return {
    id: event.id,
    subject_uid: event.subjectUid,
    conversation_id: event.conversationId,
    job_id: event.jobId,
    payload: { ...event.payload },
    created_at: event.createdAt,
    claimed_at: event.claimedAt,
    claimed_by: event.claimedBy,
  };
}
