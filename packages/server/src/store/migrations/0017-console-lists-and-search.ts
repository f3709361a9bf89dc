import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * The console's lists and search at scale (docs/scale.md, "Lists and search").
 *
 * Lists: each conversation keeps how
 * many messages it holds and when the newest was written, instead of the list counting every
 * message of its page's conversations; and the lists page by key (`created_at`, `id`) through
 * indexes that hold the key, instead of by `OFFSET`.
 *
 * The counts are kept by triggers on `ai_gateway_messages`, whatever writes or deletes the
 * messages (the gateway, an import, a prune): on SQLite one per row, on PostgreSQL one per
 * statement over its transition table (an import's insert of many messages updates each
 * conversation once). Existing conversations are counted once here.
 *
 * Search: indexes of messages and items in search order, newest first (a search first reads
 * the newest rows, console-search-probe.ts); on PostgreSQL, GIN indexes of the `pg_trgm` extension on the messages' and items' JSON
 * text, which `ILIKE '%…%'` uses (the same substring match as SQLite's trigram FTS5 index, any
 * script). The extension is created in schema `public` when it is not there yet (PostgreSQL 13
 * and later let a database owner create it); where it cannot be, the search works as before,
 * reading every row, and docs/scale.md says how to add it.
 */
export const consoleListsAndSearchMigration: Migration = {
  name: "0017-console-lists-and-search",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    await db.schema
      .alterTable("ai_gateway_conversations")
      .addColumn("message_count", "integer", (column) => column.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable("ai_gateway_conversations")
      .addColumn("last_message_at", "text")
      .execute();
    await sql`update ai_gateway_conversations set
        message_count = (select count(*) from ai_gateway_messages m
          where m.conversation_id = ai_gateway_conversations.id),
        last_message_at = (select max(m.created_at) from ai_gateway_messages m
          where m.conversation_id = ai_gateway_conversations.id)`.execute(db);
    if (capabilities.dialect === "sqlite") {
      await sql`create trigger ai_gateway_conversations_count_insert
        after insert on ai_gateway_messages begin
          update ai_gateway_conversations set
            message_count = message_count + 1,
            last_message_at = case
              when last_message_at is null or new.created_at > last_message_at
              then new.created_at else last_message_at end
          where id = new.conversation_id;
        end`.execute(db);
      await sql`create trigger ai_gateway_conversations_count_delete
        after delete on ai_gateway_messages begin
          update ai_gateway_conversations set
            message_count = message_count - 1,
            last_message_at = (select max(m.created_at) from ai_gateway_messages m
              where m.conversation_id = old.conversation_id)
          where id = old.conversation_id;
        end`.execute(db);
    } else {
      await sql`create function verbatim_conversation_counts_insert() returns trigger
        language plpgsql as $$
        begin
          update ai_gateway_conversations c set
            message_count = c.message_count + n.added,
            last_message_at = greatest(c.last_message_at, n.newest)
          from (select conversation_id, count(*) as added, max(created_at) as newest
                from verbatim_new_messages group by conversation_id) n
          where c.id = n.conversation_id;
          return null;
        end $$`.execute(db);
      await sql`create trigger ai_gateway_conversations_count_insert
        after insert on ai_gateway_messages
        referencing new table as verbatim_new_messages
        for each statement execute function verbatim_conversation_counts_insert()`.execute(db);
      await sql`create function verbatim_conversation_counts_delete() returns trigger
        language plpgsql as $$
        begin
          update ai_gateway_conversations c set
            message_count = c.message_count - o.removed,
            last_message_at = (select max(m.created_at) from ai_gateway_messages m
              where m.conversation_id = c.id)
          from (select conversation_id, count(*) as removed
                from verbatim_old_messages group by conversation_id) o
          where c.id = o.conversation_id;
          return null;
        end $$`.execute(db);
      await sql`create trigger ai_gateway_conversations_count_delete
        after delete on ai_gateway_messages
        referencing old table as verbatim_old_messages
        for each statement execute function verbatim_conversation_counts_delete()`.execute(db);
    }
    // Keyset pages of the console's lists: newest first, of everyone or of one subject.
    for (const table of ["ai_gateway_conversations", "background_agent_jobs"] as const) {
      await db.schema
        .createIndex(`${table}_newest`)
        .on(table)
        .columns(["created_at", "id"])
        .execute();
      await db.schema
        .createIndex(`${table}_subject_newest`)
        .on(table)
        .columns(["subject_uid", "created_at", "id"])
        .execute();
    }
    await db.schema.dropIndex("ai_gateway_conversations_subject").execute();
    // Search reads the newest messages and items first, in its own order, before its index:
    // a word most rows hold fills its page among them (console-search-probe.ts).
    await db.schema
      .createIndex("ai_gateway_messages_newest")
      .on("ai_gateway_messages")
      .columns(["created_at", "conversation_id", "id"])
      .execute();
    await db.schema
      .createIndex("background_agent_job_turn_items_newest")
      .on("background_agent_job_turn_items")
      .columns(["created_at", "job_id", "item_key"])
      .execute();
    if (capabilities.dialect === "postgres") await trigramIndexes(db);
  },
};

/** The schema holding `pg_trgm`; undefined when it is not installed. */
export async function installedTrigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  return (
    await sql<{ schema: string }>`select extnamespace::regnamespace::text as schema
      from pg_extension where extname = 'pg_trgm'`.execute(db)
  ).rows[0]?.schema;
}

/** The schema holding `pg_trgm`, created in `public` if it can be; undefined if not. */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const installed = () => installedTrigramSchema(db);
  const found = await installed();
  if (found !== undefined) return found;
  // Not allowed or not available: the migration goes on without it (a savepoint keeps the
  // transaction usable).
  await sql`savepoint verbatim_pg_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm schema public`.execute(db);
    await sql`release savepoint verbatim_pg_trgm`.execute(db);
  } catch {
    await sql`rollback to savepoint verbatim_pg_trgm`.execute(db);
    return undefined;
  }
  return installed();
}

async function trigramIndexes(db: Kysely<unknown>): Promise<void> {
  const schema = await trigramSchema(db);
  if (schema === undefined) return;
  const ops = sql.raw(`${schema}.gin_trgm_ops`);
  await sql`create index ai_gateway_messages_search_trgm on ai_gateway_messages
    using gin ((content::text) ${ops})`.execute(db);
  await sql`create index background_agent_job_turn_items_search_trgm
    on background_agent_job_turn_items using gin ((item::text) ${ops})`.execute(db);
}
