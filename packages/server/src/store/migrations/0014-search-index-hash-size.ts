import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";
import { SEARCH_INDEX_HASH_BYTES, SEARCH_INDEXES } from "../search-indexes.js";

/**
 * The console's FTS5 search indexes (migration 0007) keep up to 16 MiB of new index data in
 * memory per transaction before writing a segment, instead of FTS5's default 1 MiB (its
 * `hashsize` setting, stored in the index). An import's deferred indexing (migration 0013)
 * fills the index with tens of thousands of rows at once: with fewer, larger segments it merges
 * less (docs/interop.md, "Performance": 15–30 % less CPU time for that fill). A gateway write
 * indexes a few rows, far below either size, so nothing changes for it. The index's content is
 * unchanged and search finds the same rows. On PostgreSQL nothing is done (no such index).
 */
export const searchIndexHashSizeMigration: Migration = {
  name: "0014-search-index-hash-size",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "sqlite") return;
    for (const { index } of SEARCH_INDEXES) {
      const i = sql.table(index);
      await sql`insert into ${i}(${i}, rank) values ('hashsize', ${sql.lit(SEARCH_INDEX_HASH_BYTES)})`.execute(
        db,
      );
    }
  },
};
