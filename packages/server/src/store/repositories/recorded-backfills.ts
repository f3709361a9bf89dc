import { sql, type Kysely, type Selectable } from "kysely";
import type { HistoryBackfillTable, StoreSchema } from "../schema.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";
import type { ChainNodeRow } from "./recorded-calls.js";

/**
 * Rows of the history backfill (migration 0012): the recorded conversations whose gateway
 * messages are still to be written, and the chain nodes of one of them. These only read and
 * write rows; gateway/recording/backfill.ts decides.
 */

export type HistoryBackfillRow = Selectable<HistoryBackfillTable>;

/** Up to `limit` conversations still to backfill. */
export async function listHistoryBackfills(
  db: Kysely<StoreSchema>,
  limit: number,
): Promise<HistoryBackfillRow[]> {
  return (
    db
      .selectFrom("ai_gateway_history_backfills")
      .selectAll()
      .orderBy("subject_uid")
      .orderBy("conversation_id")
      .limit(limit)
      // The migration of old rows: the list holds every subject's conversations to backfill.
      .modifyEnd(sql.raw(ACROSS_SUBJECTS))
      .execute()
  );
}

/** Takes a conversation off the list: false when it was not on it (another process took it). */
export async function deleteHistoryBackfill(
  db: Kysely<StoreSchema>,
  row: HistoryBackfillRow,
): Promise<boolean> {
  const result = await db
    .deleteFrom("ai_gateway_history_backfills")
    .where("subject_uid", "=", row.subject_uid)
    .where("conversation_id", "=", row.conversation_id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The chain nodes of a subject's conversation (the subject's part of the primary key). */
export async function listConversationNodes(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<ChainNodeRow[]> {
  return db
    .selectFrom("ai_gateway_chain_nodes")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("conversation_id", "=", conversationId)
    .execute();
}
