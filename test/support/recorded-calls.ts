/**
 * Recorded calls are placed in their chains right after the client has its answer
 * (docs/server.md, "Recorded calls"): a test that reads a chain after a call waits for this.
 */
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

/** Resolves once every recorded call of the subject is placed (throws after `timeoutMs`). */
export async function callsPlaced(
  database: StoreDatabase,
  subjectUid: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .where("conversation_id", "=", "")
      .executeTakeFirst();
    if (row === undefined) return;
    if (Date.now() > deadline) throw new Error(`call ${row.id} was not placed in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
