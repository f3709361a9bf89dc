import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";
import { SEARCH_INDEXES } from "../search-indexes.js";

/**
 * Bulk imports index their rows at the end instead of one by one (docs/interop.md,
 * "Performance"). On SQLite: `verbatim_search_deferrals` holds one row per running bulk import
 * and table (the rowid it started after, a lease renewed while it runs, and its process as
 * `host:pid`); the insert trigger
 * of each search index (migration 0007) indexes a new row only while no live deferral holds its
 * table; rows a deferral left out are indexed by `finishSearchDeferral`, or after a crash by the
 * next `catchUpSearchIndex`. Since a row may now be missing from the index for a while, the
 * delete and update triggers remove a row's old text only when the index holds the row (FTS5's
 * `delete` of text it never indexed would corrupt it). On PostgreSQL nothing is created (the
 * search reads the tables themselves).
 */
export const searchIndexDeferralMigration: Migration = {
  name: "0013-search-index-deferral",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "sqlite") return;
    await sql`create table verbatim_search_deferrals (
      id text primary key,
      table_name text not null,
      after_rowid integer not null,
      expires_at text not null,
      owner text not null
    )`.execute(db);
    for (const { table, column, index } of SEARCH_INDEXES) {
      const t = sql.table(table);
      const i = sql.table(index);
      const c = sql.ref(column);
      const indexed = sql`exists (select 1 from ${sql.table(`${index}_docsize`)} where id = old.rowid)`;
      for (const kind of ["insert", "delete", "update"])
        await sql`drop trigger ${sql.table(`${index}_${kind}`)}`.execute(db);
      await sql`create trigger ${sql.table(`${index}_insert`)} after insert on ${t}
        when not exists (select 1 from verbatim_search_deferrals
          where table_name = ${sql.lit(table)}
            and expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        begin
          insert into ${i}(rowid, ${c}) values (new.rowid, new.${c});
        end`.execute(db);
      await sql`create trigger ${sql.table(`${index}_delete`)} after delete on ${t}
        when ${indexed}
        begin
          insert into ${i}(${i}, rowid, ${c}) values ('delete', old.rowid, old.${c});
        end`.execute(db);
      await sql`create trigger ${sql.table(`${index}_update`)} after update of ${c} on ${t} begin
        insert into ${i}(${i}, rowid, ${c}) select 'delete', old.rowid, old.${c} where ${indexed};
        insert into ${i}(rowid, ${c}) values (new.rowid, new.${c});
      end`.execute(db);
    }
  },
};
