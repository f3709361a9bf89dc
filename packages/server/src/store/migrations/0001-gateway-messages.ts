import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/** The gateway's conversations, branches, messages and idempotency keys (docs/store.md). */
export const gatewayMessagesMigration: Migration = {
  name: "0001-gateway-messages",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    const json = capabilities.jsonColumnType;
    await db.schema
      .createTable("ai_gateway_conversations")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("metadata", json, (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("ai_gateway_conversations_subject")
      .on("ai_gateway_conversations")
      .columns(["subject_uid", "created_at"])
      .execute();

    await db.schema
      .createTable("ai_gateway_branches")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) =>
        column.notNull().references("ai_gateway_conversations.id"),
      )
      .addColumn("parent_branch_id", "text", (column) =>
        column.references("ai_gateway_branches.id"),
      )
      .addColumn("fork_depth", "integer", (column) => column.notNull())
      .addColumn("tip_depth", "integer", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("ai_gateway_branches_conversation")
      .on("ai_gateway_branches")
      .columns(["conversation_id"])
      .execute();

    await db.schema
      .createTable("ai_gateway_messages")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) =>
        column.notNull().references("ai_gateway_conversations.id"),
      )
      .addColumn("previous_message_id", "text", (column) =>
        column.references("ai_gateway_messages.id"),
      )
      .addColumn("type", "text", (column) => column.notNull())
      .addColumn("role", "text", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("content", json, (column) => column.notNull())
      .addColumn("metadata", json, (column) => column.notNull())
      .addColumn("branch_id", "text", (column) =>
        column.notNull().references("ai_gateway_branches.id"),
      )
      .addColumn("depth", "integer", (column) => column.notNull())
      .addColumn("context_start_depth", "integer", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("updated_at", "text", (column) => column.notNull())
      .addUniqueConstraint("ai_gateway_messages_branch_depth", ["branch_id", "depth"])
      .execute();
    await db.schema
      .createIndex("ai_gateway_messages_conversation")
      .on("ai_gateway_messages")
      .columns(["conversation_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("ai_gateway_messages_previous")
      .on("ai_gateway_messages")
      .columns(["previous_message_id"])
      .execute();

    await db.schema
      .createTable("ai_gateway_idempotency_keys")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("idempotency_key", "text", (column) => column.notNull())
      .addColumn("operation", "text", (column) => column.notNull())
      .addColumn("request_sha256", "text", (column) => column.notNull())
      .addColumn("result", json, (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_idempotency_keys_primary", [
        "subject_uid",
        "idempotency_key",
      ])
      .execute();
  },
};
