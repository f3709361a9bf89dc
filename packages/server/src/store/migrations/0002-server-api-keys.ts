import type { Kysely } from "kysely";
import type { Migration } from "./migration.js";

/** The server's per-subject API keys, stored as SHA-256 hashes (docs/server/README.md). */
export const serverApiKeysMigration: Migration = {
  name: "0002-server-api-keys",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("verbatim_api_keys")
      .addColumn("key_sha256", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("key_prefix", "text", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema
      .createIndex("verbatim_api_keys_subject")
      .on("verbatim_api_keys")
      .columns(["subject_uid"])
      .execute();
  },
};
