import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * Packs of recorded bytes (docs/server/recorded-calls.md, "How recorded bytes are stored", 5):
 * a subject's small pieces joined and compressed as one frame. A pack holds pieces under their
 * own ids (`pieces` lists them, in id order, with their sizes), and its id is the largest of
 * them, so the pack of a piece is the subject's first pack at or after the piece's id: packing
 * deletes the small pieces and writes the pack, and no call's manifest or chunk row changes.
 * A table of its own so that the pieces table, emptied as its rows are packed, is left free
 * pages a vacuum can give back, not pages a pack row keeps.
 */
export const recordedBodyPacksMigration: Migration = {
  name: "0020-recorded-body-packs",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    const sqlite = capabilities.dialect === "sqlite";
    const bytes = sqlite ? "blob" : "bytea";
    await db.schema
      .createTable("ai_gateway_body_packs")
      .$call((builder) =>
        sqlite
          ? // The rowid is the id (piece ids are unique across subjects): no second copy of it.
            builder.addColumn("id", "integer", (column) => column.primaryKey())
          : builder.addColumn("id", "bigint", (column) => column.notNull()),
      )
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("codec", "integer", (column) => column.notNull())
      .addColumn("size", "integer", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      // Before the bytes: SQLite reads a pack's list without its overflow pages.
      .addColumn("pieces", bytes, (column) => column.notNull())
      .addColumn("bytes", bytes, (column) => column.notNull())
      .$call((builder) =>
        sqlite
          ? builder
          : builder.addPrimaryKeyConstraint("ai_gateway_body_packs_primary", ["subject_uid", "id"]),
      )
      .execute();
    if (sqlite) {
      await db.schema
        .createIndex("ai_gateway_body_packs_subject")
        .on("ai_gateway_body_packs")
        .columns(["subject_uid", "id"])
        .execute();
    }
  },
};
