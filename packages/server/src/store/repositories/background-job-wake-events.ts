import type { Kysely, Selectable } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { BackgroundAgentJobWakeEventTable } from "../job-schema.js";
import type { StoreSchema } from "../schema.js";

/**
 * The wake-event outbox (SPEC B11). A job's end inserts one event in the transaction that ends
 * the job; consumers claim unclaimed events, each exactly once. A claim is always one subject's
 * (optionally one conversation's): every statement names the subject, so on a sharded store the
 * claim runs on the one partition or node that holds it (a row lock across shards is not
 * possible there). On PostgreSQL the candidate rows are selected `FOR UPDATE SKIP LOCKED`, so
 * concurrent consumers take disjoint events without waiting on each other; on SQLite the write
 * transaction (`BEGIN IMMEDIATE`) already serializes claimers. Call `claimWakeEventRows` inside
 * a write transaction.
 */
export type WakeEventRow = Selectable<BackgroundAgentJobWakeEventTable>;

export async function insertWakeEvent(db: Kysely<StoreSchema>, row: WakeEventRow): Promise<void> {
  await db.insertInto("background_agent_job_wake_events").values(row).execute();
}

export async function claimWakeEventRows(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  claim: {
    readonly subjectUid: string;
    readonly consumer: string;
    readonly limit: number;
    readonly now: string;
    readonly conversationId?: string;
  },
): Promise<WakeEventRow[]> {
  const rowLocks = capabilities.dialect === "postgres";
  const candidates = await db
    .selectFrom("background_agent_job_wake_events")
    .select("id")
    .where("subject_uid", "=", claim.subjectUid)
    .where("claimed_at", "is", null)
    .$if(claim.conversationId !== undefined, (query) =>
      query.where("conversation_id", "=", claim.conversationId ?? ""),
    )
    .orderBy("created_at")
    .orderBy("id")
    .limit(claim.limit)
    .$if(rowLocks, (query) => query.forUpdate().skipLocked())
    .execute();
  if (candidates.length === 0) return [];
  const ids = candidates.map((row) => row.id);
  await db
    .updateTable("background_agent_job_wake_events")
    .set({ claimed_at: claim.now, claimed_by: claim.consumer })
    .where("subject_uid", "=", claim.subjectUid)
    .where("id", "in", ids)
    .where("claimed_at", "is", null)
    .execute();
  return db
    .selectFrom("background_agent_job_wake_events")
    .selectAll()
    .where("subject_uid", "=", claim.subjectUid)
    .where("id", "in", ids)
    .where("claimed_by", "=", claim.consumer)
    .where("claimed_at", "=", claim.now)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export async function listWakeEvents(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
): Promise<WakeEventRow[]> {
  return db
    .selectFrom("background_agent_job_wake_events")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("job_id", "=", jobId)
    .orderBy("created_at")
    .execute();
}
