import { VerbatimError, safeParseStrictJson } from "verbatim-llm/core";
import type { JobRow, TurnRow } from "../../store/repositories/background-jobs.js";
import type { TurnItemRow } from "../../store/repositories/background-job-items.js";
import type { WakeEventRow } from "../../store/repositories/background-job-wake-events.js";
import {
  trajectoryItemSchema,
  type TrajectoryItem,
  type StoredTurnItem,
} from "verbatim-llm/trajectory";
import type {
  BackgroundAgentJob,
  JobStatus,
  JobTurn,
  TurnStatus,
  WakeEvent,
  WakePayload,
} from "./job-types.js";

/** Stored rows → the job service's values; a row verbatim did not write is `store_row_invalid`. */
function rowInvalid(table: string, id: string, what: string): VerbatimError {
  return new VerbatimError("store_row_invalid", `${table} row ${id}: ${what}`, {
    where: `${table} ${id}`,
    hint: "Restore the row from a backup",
  });
}

function parseJson(table: string, id: string, text: string): unknown {
  const parsed = safeParseStrictJson(text);
  if (!parsed.ok) throw rowInvalid(table, id, `not JSON: ${parsed.problem.message}`);
  return parsed.value;
}

export function jobFromRow(row: JobRow): BackgroundAgentJob {
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    conversationId: row.conversation_id,
    status: row.status as JobStatus,
    retryBudget: row.retry_budget,
    attempts: row.attempts,
    metadata: parseJson("background_agent_jobs", row.id, row.metadata) as Record<string, string>,
    result:
      row.result === null
        ? null
        : (parseJson("background_agent_jobs", row.id, row.result) as WakePayload),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endedAt: row.ended_at,
  };
}

export function turnFromRow(row: TurnRow): JobTurn {
  return {
    id: row.id,
    jobId: row.job_id,
    turnIndex: row.turn_index,
    attempt: row.attempt,
    revision: row.revision,
    status: row.status as TurnStatus,
    itemCount: row.item_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function storedItemFromRow(row: TurnItemRow): StoredTurnItem {
  const where = `${row.turn_id}/${row.position}`;
  const result = trajectoryItemSchema.safeParse(
    parseJson("background_agent_job_turn_items", where, row.item),
  );
  if (!result.success) {
    throw rowInvalid("background_agent_job_turn_items", where, result.error.message);
  }
  return {
    turn_id: row.turn_id,
    position: row.position,
    revision: row.revision,
    item_key: row.item_key,
    item: result.data as TrajectoryItem,
  };
}

export function wakeEventFromRow(row: WakeEventRow): WakeEvent {
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    conversationId: row.conversation_id,
    jobId: row.job_id,
    payload: parseJson("background_agent_job_wake_events", row.id, row.payload) as WakePayload,
    createdAt: row.created_at,
    claimedAt: row.claimed_at,
    claimedBy: row.claimed_by,
  };
}
