import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * Recorded bodies as pieces (docs/server/recorded-calls.md, "How recorded bytes are stored"):
 * - `ai_gateway_body_pieces`: runs of bytes a subject's calls brought, each stored once
 *   (compressed or not: `codec`), numbered by the store;
 * - `ai_gateway_body_chunks`: the index of the content-defined chunks of those pieces, by the
 *   first 16 bytes of their SHA-256, so bytes a subject sends again are found wherever they
 *   move;
 * - each recorded call names its bodies by manifest (`request_manifest`, `response_manifest`),
 *   the request's as a diff of an earlier call's (`request_base_call_id`) when it is one.
 * The index of chain nodes by conversation lets `verbatim db prune` delete a conversation's
 * nodes with it.
 * Rows written before keep their `request_body` and `response_body_base64` (`body_storage` 0)
 * until `verbatim db migrate` converts them; new rows leave both empty (`body_storage` 1).
 */
export const recordedBodyPiecesMigration: Migration = {
  name: "0015-recorded-body-pieces",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    const sqlite = capabilities.dialect === "sqlite";
    const bytes = sqlite ? "blob" : "bytea";
    if (sqlite) {
      // The rowid is the id: no second copy of the key.
      await db.schema
        .createTable("ai_gateway_body_pieces")
        .addColumn("id", "integer", (column) => column.primaryKey())
        .addColumn("subject_uid", "text", (column) => column.notNull())
        .addColumn("codec", "integer", (column) => column.notNull())
        .addColumn("size", "integer", (column) => column.notNull())
        .addColumn("bytes", bytes, (column) => column.notNull())
        .addColumn("created_at", "text", (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex("ai_gateway_body_pieces_subject")
        .on("ai_gateway_body_pieces")
        .columns(["subject_uid", "id"])
        .execute();
    } else {
      await sql`create sequence ai_gateway_body_piece_ids`.execute(db);
      await db.schema
        .createTable("ai_gateway_body_pieces")
        .addColumn("subject_uid", "text", (column) => column.notNull())
        .addColumn("id", "bigint", (column) => column.notNull())
        .addColumn("codec", "integer", (column) => column.notNull())
        .addColumn("size", "integer", (column) => column.notNull())
        .addColumn("bytes", bytes, (column) => column.notNull())
        .addColumn("created_at", "text", (column) => column.notNull())
        .addPrimaryKeyConstraint("ai_gateway_body_pieces_primary", ["subject_uid", "id"])
        .execute();
    }
    await db.schema
      .createTable("ai_gateway_body_chunks")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("hash", bytes, (column) => column.notNull())
      .addColumn("piece_id", sqlite ? "integer" : "bigint", (column) => column.notNull())
      .addColumn("piece_offset", "integer", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_body_chunks_primary", ["subject_uid", "hash"])
      .$call((builder) => (sqlite ? builder.modifyEnd(sql`without rowid`) : builder))
      .execute();
    // The chunks of a piece, deleted with it (`verbatim db prune`).
    await db.schema
      .createIndex("ai_gateway_body_chunks_piece")
      .on("ai_gateway_body_chunks")
      .columns(["subject_uid", "piece_id"])
      .execute();
    for (const [name, type] of [
      ["body_storage", "integer"],
      ["request_manifest", bytes],
      ["request_base_call_id", "text"],
      ["response_manifest", bytes],
      ["request_size", "integer"],
      ["response_size", "integer"],
    ] as const) {
      await db.schema
        .alterTable("ai_gateway_recorded_calls")
        .addColumn(name, type, (column) =>
          name === "body_storage" ? column.notNull().defaultTo(0) : column,
        )
        .execute();
    }
    // The calls a body diffs against: pruning an older call rewrites them first.
    await db.schema
      .createIndex("ai_gateway_recorded_calls_base")
      .on("ai_gateway_recorded_calls")
      .column("request_base_call_id")
      .where(sql.ref("request_base_call_id"), "is not", null)
      .execute();
    // A conversation's nodes, deleted with it (`verbatim db prune`).
    await db.schema
      .createIndex("ai_gateway_chain_nodes_conversation")
      .on("ai_gateway_chain_nodes")
      .column("conversation_id")
      .execute();
    // Calls still in the old form, found by `verbatim db migrate` without a scan.
    await db.schema
      .createIndex("ai_gateway_recorded_calls_storage")
      .on("ai_gateway_recorded_calls")
      .columns(["body_storage", "id"])
      .where(sql.ref("body_storage"), "=", 0)
      .execute();
  },
};
