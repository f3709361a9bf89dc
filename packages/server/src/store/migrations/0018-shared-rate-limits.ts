import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * The rate limits every server on one PostgreSQL database shares (docs/scale.md, "Limits across
 * servers"): one row per limited thing (`key:<sha256 of an API key>`, `auth:<client address>`)
 * holding when its bucket is next empty (`tat_ms`, the generic cell rate algorithm's
 * theoretical arrival time, in milliseconds of the database's clock) and whether the last
 * request was admitted. One `insert … on conflict do update … returning` per request.
 *
 * UNLOGGED: no WAL and no fsync per request; after a crash of PostgreSQL the table comes back
 * empty (every limit starts full), and it is not copied to standbys. Rows whose bucket is full
 * again are deleted now and then by each server (gateway/limits/shared-limits.ts).
 * SQLite has no such table: a SQLite store is one host, its server limits in memory.
 */
export const sharedRateLimitsMigration: Migration = {
  name: "0018-shared-rate-limits",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "postgres") return;
    await db.schema
      .createTable("verbatim_rate_limits")
      .modifyFront(sql`unlogged`)
      .addColumn("bucket", "text", (column) => column.primaryKey())
      .addColumn("tat_ms", "float8", (column) => column.notNull())
      .addColumn("admitted", "boolean", (column) => column.notNull())
      .execute();
  },
};
