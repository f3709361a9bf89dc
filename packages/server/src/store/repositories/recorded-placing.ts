import type { Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";

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
  id: string,
): Promise<PlacingState | undefined> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["conversation_id", "matched_count"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Keeps the count of a call's messages stored before it, while it is not placed. */
export async function keepMatchedCount(
  db: Kysely<StoreSchema>,
  id: string,
  matchedCount: number,
): Promise<void> {
  await db
    .updateTable("ai_gateway_recorded_calls")
    .set({ matched_count: matchedCount })
    .where("id", "=", id)
    .where("conversation_id", "=", "")
    .execute();
}

/**
 * The oldest calls not placed in a chain yet that were kept before `keptBefore`, at most
 * `limit`, leaving out `skipIds` (calls whose placing failed here): the calls a server that
 * died left (gateway/recording/leftovers.ts). Read through the index of calls by conversation,
 * where the unplaced ones (conversation '') are one range: never a walk of placed calls.
 */
export async function listLeftoverCalls(
  db: Kysely<StoreSchema>,
  keptBefore: string,
  limit: number,
  skipIds: readonly string[],
): Promise<{ id: string; subject_uid: string }[]> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "subject_uid"])
    .where("conversation_id", "=", "")
    .where("created_at", "<", keptBefore)
    .$if(skipIds.length > 0, (query) => query.where("id", "not in", skipIds))
    .orderBy("conversation_id")
    .orderBy("created_at")
    .limit(limit)
    .execute();
}
