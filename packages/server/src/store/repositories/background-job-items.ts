import type { Kysely, Selectable } from "kysely";
import type { BackgroundAgentJobTurnItemTable } from "../job-schema.js";
import type { StoreSchema } from "../schema.js";

/**
 * The queries of `background_agent_job_turn_items` (SPEC B7, B8): insert and read, nothing
 * else: there is no update and no delete of an item. Positions are assigned by the job
 * service from the turn's `item_count` while it holds the turn's row lock.
 */
export type TurnItemRow = Selectable<BackgroundAgentJobTurnItemTable>;

export async function insertTurnItems(
  db: Kysely<StoreSchema>,
  rows: readonly TurnItemRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto("background_agent_job_turn_items")
    .values([...rows])
    .execute();
}

/** The items of the subject's turn with these keys (for idempotent appends). */
export async function findTurnItemsByKey(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  itemKeys: readonly string[],
): Promise<TurnItemRow[]> {
  if (itemKeys.length === 0) return [];
  return db
    .selectFrom("background_agent_job_turn_items")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("turn_id", "=", turnId)
    .where("item_key", "in", [...itemKeys])
    .execute();
}

/** Every item of a job, by turn order then position. */
export async function listJobItems(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
): Promise<TurnItemRow[]> {
  return db
    .selectFrom("background_agent_job_turn_items as item")
    .innerJoin("background_agent_job_turns as turn", (join) =>
      join.onRef("turn.subject_uid", "=", "item.subject_uid").onRef("turn.id", "=", "item.turn_id"),
    )
    .selectAll("item")
    .where("item.job_id", "=", jobId)
    .where("item.subject_uid", "=", subjectUid)
    .orderBy("turn.turn_index")
    .orderBy("item.position")
    .execute();
}

/** The items of one turn, by position. */
export async function listTurnItems(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
): Promise<TurnItemRow[]> {
  return db
    .selectFrom("background_agent_job_turn_items")
    .selectAll()
    .where("turn_id", "=", turnId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("position")
    .execute();
}
