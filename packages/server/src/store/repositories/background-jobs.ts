import type { Kysely, Selectable, Updateable } from "kysely";
import type { BackgroundAgentJobTable, BackgroundAgentJobTurnTable } from "../job-schema.js";
import type { StoreSchema } from "../schema.js";

/**
 * The queries of `background_agent_jobs` and `background_agent_job_turns`, one set for both
 * dialects. Every query names the subject. The job service (src/gateway/jobs) validates input
 * and decides; these functions only read and write rows.
 */
export type JobRow = Selectable<BackgroundAgentJobTable>;
export type TurnRow = Selectable<BackgroundAgentJobTurnTable>;

export async function insertJob(db: Kysely<StoreSchema>, row: JobRow): Promise<void> {
  await db.insertInto("background_agent_jobs").values(row).execute();
}

export async function findJob(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
): Promise<JobRow | undefined> {
  return db
    .selectFrom("background_agent_jobs")
    .selectAll()
    .where("id", "=", jobId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
}

/**
 * Reads a job for a change inside a write transaction. The no-op update takes the row lock on
 * PostgreSQL (SQLite's `BEGIN IMMEDIATE` already holds the write lock), so changes to one job
 * never interleave; the read after it sees the last committed state.
 */
export async function lockJob(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
): Promise<JobRow | undefined> {
  const locked = await db
    .updateTable("background_agent_jobs")
    .set((eb) => ({ attempts: eb.ref("attempts") }))
    .where("id", "=", jobId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
  if (locked.numUpdatedRows !== 1n) return undefined;
  return findJob(db, subjectUid, jobId);
}

export async function updateJob(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
  changes: Updateable<BackgroundAgentJobTable>,
): Promise<void> {
  await db
    .updateTable("background_agent_jobs")
    .set(changes)
    .where("id", "=", jobId)
    .where("subject_uid", "=", subjectUid)
    .execute();
}

export async function insertTurn(db: Kysely<StoreSchema>, row: TurnRow): Promise<void> {
  await db.insertInto("background_agent_job_turns").values(row).execute();
}

export async function findTurn(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
): Promise<TurnRow | undefined> {
  return db
    .selectFrom("background_agent_job_turns")
    .selectAll()
    .where("id", "=", turnId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
}

/** Reads a turn for a change, taking its row lock first (see `lockJob`). */
export async function lockTurn(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
): Promise<TurnRow | undefined> {
  const locked = await db
    .updateTable("background_agent_job_turns")
    .set((eb) => ({ item_count: eb.ref("item_count") }))
    .where("id", "=", turnId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
  if (locked.numUpdatedRows !== 1n) return undefined;
  return findTurn(db, subjectUid, turnId);
}

export async function updateTurn(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  changes: Updateable<BackgroundAgentJobTurnTable>,
): Promise<void> {
  await db
    .updateTable("background_agent_job_turns")
    .set(changes)
    .where("id", "=", turnId)
    .where("subject_uid", "=", subjectUid)
    .execute();
}

/** The ids of the jobs a conversation of the subject owns, oldest first. */
export async function listJobIdsOfConversation(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom("background_agent_jobs")
    .select("id")
    .where("conversation_id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((row) => row.id);
}

/** A job's turns in turn order. */
export async function listTurns(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
): Promise<TurnRow[]> {
  return db
    .selectFrom("background_agent_job_turns")
    .selectAll()
    .where("job_id", "=", jobId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("turn_index")
    .execute();
}

/**
 * Moves a running turn's `item_count` on by `count` and returns the turn as updated (one
 * statement: on PostgreSQL it takes the row lock, so concurrent appends get disjoint position
 * ranges); undefined when no running turn of the subject has this id.
 */
export async function reserveTurnPositions(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  count: number,
  now: string,
): Promise<TurnRow | undefined> {
  return db
    .updateTable("background_agent_job_turns")
    .set((eb) => ({ item_count: eb("item_count", "+", count), updated_at: now }))
    .where("id", "=", turnId)
    .where("subject_uid", "=", subjectUid)
    .where("status", "=", "running")
    .returningAll()
    .executeTakeFirst();
}

/** Ends the job's turns still running with `status` (a job that stops or retries). */
export async function closeRunningTurnRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
  status: string,
  now: string,
): Promise<void> {
  await db
    .updateTable("background_agent_job_turns")
    .set({ status, updated_at: now })
    .where("job_id", "=", jobId)
    .where("subject_uid", "=", subjectUid)
    .where("status", "=", "running")
    .execute();
}
