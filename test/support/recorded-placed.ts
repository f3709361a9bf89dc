/**
 * Waits until a subject has `calls` recorded calls, each with its place in a chain (its
 * conversation, nodes and gateway messages). A client holds a whole JSON answer (its length is
 * known) before the server has committed the call, and a call's place may be written just after
 * the answer, so a test that reads the history right after a call waits for it first.
 */
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { until } from "./until.js";

export async function placed(
  database: StoreDatabase,
  subject: string,
  calls: number,
): Promise<void> {
  await until(async () => {
    const rows = await database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select("conversation_id")
      .where("subject_uid", "=", subject)
      .execute();
    return rows.length === calls && rows.every((row) => row.conversation_id !== "");
  });
}
