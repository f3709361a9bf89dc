import { sql, type Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * The call row's facts a placing written in several transactions reads and keeps between them
 * (gateway/recording/placing.ts): whether the call is placed yet (another process may have
 * placed it meanwhile) and the count of its messages stored before it, kept in the row while it
 * is unplaced, so a placing resumed after a crash still counts only those.
 */
export interface PlacingState {
  readonly conversation_id: string;
  readonly matched_count: number;
}

export async function findPlacingState(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
): Promise<PlacingState | undefined> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["conversation_id", "matched_count"])
    .where("subject_uid", "=", subjectUid)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Keeps the count of a call of the subject's messages stored before it, while it is not placed. */
export async function keepMatchedCount(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
  matchedCount: number,
): Promise<void> {
  await db
    .updateTable("ai_gateway_recorded_calls")
    .set({ matched_count: matchedCount })
    .where("subject_uid", "=", subjectUid)
    .where("id", "=", id)
    .where("conversation_id", "=", "")
    .execute();
}

/**
 * The oldest calls (in the order they were kept) not placed in a chain yet that were kept
 * before `keptBefore`, at most `limit`, leaving out `skipIds` (calls whose placing failed
 * here): the calls a server that died left (gateway/recording/leftovers.ts). Read through the
 * partial index of the unplaced calls only: never a walk of placed calls.
 */
export async function listLeftoverCalls(
  db: Kysely<StoreSchema>,
  keptBefore: string,
  limit: number,
  skipIds: readonly string[],
): Promise<{ id: string; subject_uid: string }[]> {
  return (
    db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["id", "subject_uid"])
      // A literal: the planners use the partial index of unplaced calls only when the statement
      // itself says conversation_id = ''. Ordered as kept (PostgreSQL's sequence, then time):
      // an order by time alone has SQLite walk every older call by its time instead.
      .where("conversation_id", "=", sql.lit(""))
      .where("created_at", "<", keptBefore)
      .$if(skipIds.length > 0, (query) => query.where("id", "not in", skipIds))
      .orderBy("kept_order")
      .orderBy("created_at")
      .limit(limit)
      // A maintenance scan: the calls any server left, whoever's they are.
      .modifyEnd(sql.raw(ACROSS_SUBJECTS))
      .execute()
  );
}
