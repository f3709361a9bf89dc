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
