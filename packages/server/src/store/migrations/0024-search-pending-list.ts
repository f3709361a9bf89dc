import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import { SEARCH_INDEXES, SEARCH_PENDING_LIST_KB } from "../search-indexes.js";
import type { Migration } from "./migration.js";

/**
 * PostgreSQL: the trigram indexes keep at most `SEARCH_PENDING_LIST_KB` of new entries in their
 * pending list (`gin_pending_list_limit`) instead of the server's default 4 MB. A GIN index adds
 * a new row's trigrams to that list, one entry each, uncompressed, and merges the list into the
 * index once it is full (or at a vacuum); until then a small or young store's index is mostly
 * that list. A smaller list is merged more often, at much the same cost per row (docs/scale.md,
 * "Lists and search", has the figures).
 *
 * Setting it is a change of the index's options only (nothing is rebuilt; a lock that lets reads
 * and writes go on). A partitioned index takes no options itself: each partition's is set (the
 * partitions of a store are made once, by `--partitions`; a store partitioned after this
 * migration copies the option with the index's definition). Where the indexes were not made
 * (no `pg_trgm`), nothing changes.
 */
export const searchPendingListMigration: Migration = {
  name: "0024-search-pending-list",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "postgres") return;
    for (const { trigramIndex } of SEARCH_INDEXES) {
      const indexes = await sql<{ name: string }>`
        select c.relname as name from pg_class c
        where c.oid = to_regclass(${trigramIndex}) and c.relkind = 'i'
        union all
        select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = to_regclass(${trigramIndex})`.execute(db);
      for (const { name } of indexes.rows) {
        await sql`alter index ${sql.id(name)}
          set (gin_pending_list_limit = ${sql.lit(SEARCH_PENDING_LIST_KB)})`.execute(db);
      }
    }
  },
};
