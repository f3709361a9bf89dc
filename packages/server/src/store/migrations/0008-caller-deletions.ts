import type { Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_caller_deletions`: what a subject deleted through the API (a conversation, a
 * response, a conversation item), by id. A deletion is a tombstone: the stored rows stay as
 * they were (the operator's console and exports still read them), and every caller route of
 * that subject answers the id as if it did not exist (docs/server/conversations.md, "Conversations API").
 */
export const callerDeletionsMigration: Migration = {
  name: "0008-caller-deletions",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("ai_gateway_caller_deletions")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("object_id", "text", (column) => column.notNull())
      .addColumn("kind", "text", (column) => column.notNull())
      .addColumn("deleted_at", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_caller_deletions_pk", ["subject_uid", "object_id"])
      .execute();
  },
};
