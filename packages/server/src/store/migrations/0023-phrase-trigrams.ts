import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import { namePartitionIndexes } from "../partitions.js";
import { SEARCH_INDEXES, trigramText } from "../search-indexes.js";
import { installedTrigramSchema } from "./0017-console-lists-and-search.js";
import type { Migration } from "./migration.js";

/**
 * PostgreSQL: the trigram indexes of migration 0017 index the JSON text with its spaces taken
 * out (store/search-indexes.ts), so that a phrase's trigrams across its words are in the index
 * too. `pg_trgm` takes trigrams word by word: on the text as written, a phrase of two words
 * found every row holding both words anywhere, each read again to check it; on the text without
 * spaces the words run together and the index finds little more than the rows holding the
 * phrase. A word is found as before. Where the indexes were not made (no `pg_trgm`), nothing
 * changes. Each index is made again inside the migration's transaction: writes to its table
 * wait until the commit, reads do not (docs/scale.md, "Lists and search").
 */
export const phraseTrigramsMigration: Migration = {
  name: "0023-phrase-trigrams",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "postgres") return;
    const schema = await installedTrigramSchema(db);
    if (schema === undefined) return;
    for (const { table, column, trigramIndex: index } of SEARCH_INDEXES) {
      const found = await sql<{ made: boolean }>`
        select to_regclass(${index}) is not null as made`.execute(db);
      if (found.rows[0]?.made !== true) continue;
      await sql`drop index ${sql.id(index)}`.execute(db);
      await sql`create index ${sql.id(index)} on ${sql.id(table)}
        using gin ((${trigramText(sql.ref(column))}) ${sql.raw(`${schema}.gin_trgm_ops`)})`.execute(
        db,
      );
      await namePartitionIndexes(db, table);
    }
  },
};
