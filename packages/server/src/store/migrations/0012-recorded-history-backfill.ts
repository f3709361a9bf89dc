import { sql, type Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_history_backfills` (docs/server/recorded-calls.md, "Recorded calls"): the recorded conversations
 * whose history is still to be written as gateway messages. Calls recorded before migration
 * 0010 kept their bytes and chain nodes but wrote no gateway messages, and their nodes name
 * none, so the Conversations API and the console showed those conversations empty and a later
 * call continued them from no message. This lists them once, here: the conversations whose
 * chain nodes name no message and that hold no gateway message. The gateway writes their
 * history from the calls' stored bytes (gateway/recording/backfill.ts, when the server starts and
 * after `verbatim db migrate`) and removes each row when its conversation is done.
 */
export const recordedHistoryBackfillMigration: Migration = {
  name: "0012-recorded-history-backfill",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("ai_gateway_history_backfills")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_history_backfills_primary", [
        "subject_uid",
        "conversation_id",
      ])
      .execute();
    await sql`
      insert into ai_gateway_history_backfills (subject_uid, conversation_id)
      select distinct node.subject_uid, node.conversation_id
      from ai_gateway_chain_nodes node
      where node.message_id is null and node.anchor_message_id is null
        and not exists (
          select 1 from ai_gateway_messages message
          where message.subject_uid = node.subject_uid
            and message.conversation_id = node.conversation_id
        )`.execute(db);
  },
};
