import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * The console's search index (docs/console.md, "Search"). On SQLite: two FTS5 tables with the
 * trigram tokenizer (any script, Japanese and emoji included; case-insensitive) over the JSON
 * text of `ai_gateway_messages.content` and `background_agent_job_turn_items.item`, as external
 * content tables kept in step by triggers, and filled from the rows already stored. On
 * PostgreSQL nothing is created: the search is a substring match (`ILIKE`) on the same JSON
 * text, which finds what the trigram index finds (the text search parser does not split
 * Japanese); docs/console.md gives the optional `pg_trgm` index that speeds it up.
 */
const TABLES = [
  { table: "ai_gateway_messages", column: "content", index: "ai_gateway_messages_search" },
  {
    table: "background_agent_job_turn_items",
    column: "item",
    index: "background_agent_job_turn_items_search",
  },
] as const;

export const consoleSearchMigration: Migration = {
  name: "0007-console-search",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "sqlite") return;
    for (const { table, column, index } of TABLES) {
      const t = sql.table(table);
      const i = sql.table(index);
      const c = sql.ref(column);
      await sql`create virtual table ${i} using fts5(${c}, content=${sql.lit(table)}, tokenize='trigram')`.execute(
        db,
      );
      await sql`create trigger ${sql.table(`${index}_insert`)} after insert on ${t} begin
        insert into ${i}(rowid, ${c}) values (new.rowid, new.${c});
      end`.execute(db);
      await sql`create trigger ${sql.table(`${index}_delete`)} after delete on ${t} begin
        insert into ${i}(${i}, rowid, ${c}) values ('delete', old.rowid, old.${c});
      end`.execute(db);
      await sql`create trigger ${sql.table(`${index}_update`)} after update of ${c} on ${t} begin
        insert into ${i}(${i}, rowid, ${c}) values ('delete', old.rowid, old.${c});
        insert into ${i}(rowid, ${c}) values (new.rowid, new.${c});
      end`.execute(db);
      await sql`insert into ${i}(${i}) values ('rebuild')`.execute(db);
    }
  },
};
