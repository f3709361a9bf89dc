import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * Recorded calls of the pass-through routes (/v1/messages, /v1/chat/completions; docs/server/recorded-calls.md,
 * "Recorded calls"): the chain nodes, one per message prefix of a subject (matched by prefix
 * hash, the primary key: the index of the prefix lookup), and one row per model call with the
 * raw request and response bytes and the usage the provider reported.
 */
export const recordedCallsMigration: Migration = {
  name: "0009-recorded-calls",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    const json = capabilities.jsonColumnType;
    await db.schema
      .createTable("ai_gateway_chain_nodes")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("prefix_sha256", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) => column.notNull())
      .addColumn("parent_prefix_sha256", "text")
      .addColumn("position", "integer", (column) => column.notNull())
      .addColumn("message_sha256", "text", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_chain_nodes_primary", ["subject_uid", "prefix_sha256"])
      .execute();
    await db.schema
      .createTable("ai_gateway_recorded_calls")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) => column.notNull())
      .addColumn("wire_format", "text", (column) => column.notNull())
      .addColumn("path", "text", (column) => column.notNull())
      .addColumn("model", "text", (column) => column.notNull())
      .addColumn("tip_prefix_sha256", "text", (column) => column.notNull())
      .addColumn("message_count", "integer", (column) => column.notNull())
      .addColumn("matched_count", "integer", (column) => column.notNull())
      .addColumn("previous_call_id", "text")
      .addColumn("status_code", "integer", (column) => column.notNull())
      .addColumn("request_headers", json, (column) => column.notNull())
      .addColumn("request_body", "text", (column) => column.notNull())
      .addColumn("response_headers", json, (column) => column.notNull())
      .addColumn("response_body_base64", "text", (column) => column.notNull())
      .addColumn("redacted", "integer", (column) => column.notNull())
      .addColumn("input_tokens", "integer")
      .addColumn("output_tokens", "integer")
      .addColumn("cache_read_tokens", "integer")
      .addColumn("cache_write_tokens", "integer")
      .addColumn("duration_ms", "integer", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("ai_gateway_recorded_calls_tip")
      .on("ai_gateway_recorded_calls")
      .columns(["subject_uid", "tip_prefix_sha256"])
      .execute();
    await db.schema
      .createIndex("ai_gateway_recorded_calls_conversation")
      .on("ai_gateway_recorded_calls")
      .columns(["conversation_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("ai_gateway_recorded_calls_created")
      .on("ai_gateway_recorded_calls")
      .columns(["created_at"])
      .execute();
  },
};
