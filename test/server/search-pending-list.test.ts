/**
 * Migration 0024 (issue 33's store growth, docs/scale.md "Lists and search"): on PostgreSQL each
 * trigram index of the console's search keeps at most SEARCH_PENDING_LIST_KB of new entries in
 * its pending list, instead of PostgreSQL's default 4 MB that a recorded session's index was
 * mostly made of. Set on a store migrated from before it and on a new one, partitioned or not
 * (on each partition's index), and the list is merged into the index once it is that full.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import { partitionBySubject } from "../../packages/server/src/store/partitions.js";
import {
  SEARCH_INDEXES,
  SEARCH_PENDING_LIST_KB,
} from "../../packages/server/src/store/search-indexes.js";
import { freshDatabase, postgresUrl, uniqueName } from "../support/databases.js";

/** Each trigram index (each partition's, when partitioned) and its options. */
async function trigramIndexOptions(database: StoreDatabase): Promise<Map<string, string[]>> {
  const rows = await sql<{ name: string; options: string[] | null }>`
    select c.relname as name, c.reloptions as options
    from pg_class c join pg_index i on i.indexrelid = c.oid
    where c.relkind = 'i' and c.relnamespace = to_regnamespace(current_schema())
      and c.relname like '%search_trgm%'
    order by c.relname`.execute(database.db);
  return new Map(rows.rows.map((row) => [row.name, row.options ?? []]));
}

function expectSetOnEveryIndex(options: Map<string, string[]>, partitions: number | undefined) {
  const names = SEARCH_INDEXES.flatMap(({ trigramIndex }) =>
    partitions === undefined
      ? [trigramIndex]
      : Array.from({ length: partitions }, (_, r) => `${trigramIndex}_p${String(r)}`),
  ).sort();
  expect([...options.keys()]).toEqual(names);
  for (const [name, set] of options) {
    expect(set, name).toEqual([`gin_pending_list_limit=${String(SEARCH_PENDING_LIST_KB)}`]);
  }
}

describe.skipIf(postgresUrl === undefined)("migration 0024: the search's pending lists", () => {
  it("sets each trigram index's pending list, migrated from before it or new, partitioned or not", async () => {
    for (const partitions of [undefined, 4]) {
      for (const partitionedFirst of [true, false]) {
        const older = await freshDatabase("postgres", { migrate: false });
        try {
          const before = storeMigrations.findIndex(
            (migration) => migration.name === "0024-search-pending-list",
          );
          expect(before).toBeGreaterThan(0);
          // Partitioned before the migration (its indexes altered per partition), or after it
          // (the partitions' indexes made from the altered index's definition).
          await migrateDatabase(older.database, storeMigrations.slice(0, before));
          if (partitions !== undefined && partitionedFirst) {
            await partitionBySubject(older.database, partitions);
          }
          await migrateDatabase(older.database);
          if (partitions !== undefined && !partitionedFirst) {
            await partitionBySubject(older.database, partitions);
          }
          expectSetOnEveryIndex(await trigramIndexOptions(older.database), partitions);
        } finally {
          await older.cleanup();
        }
      }
    }
  });

  it("merges the pending list into the index once it holds that much", async () => {
    const fresh = await freshDatabase("postgres");
    try {
      // Its statistics functions, where no test schema's cleanup drops them.
      await sql`create extension if not exists pgstattuple schema public`.execute(
        fresh.database.db,
      );
      const store = new GatewayMessageStore(fresh.database);
      // Random hex: about 2,000 distinct trigrams a message, some 40 kB of pending entries; 60
      // of them hold several times the limit and less than PostgreSQL's default 4 MB.
      const subject = uniqueName("pending");
      let previous: string | null = null;
      for (let index = 0; index < 60; index++) {
        const [written] = await store.appendMessages(subject, {
          previousMessageId: previous,
          messages: [
            { role: "user", content: [{ type: "text", text: randomBytes(1000).toString("hex") }] },
          ],
        });
        previous = written?.id ?? null;
      }
      const index = (
        await sql<{ name: string }>`
          select c.relname as name from pg_class c
          where c.relkind = 'i' and c.relnamespace = to_regnamespace(current_schema())
            and c.relname like 'ai_gateway_messages_search_trgm%'
          order by pg_relation_size(c.oid) desc limit 1`.execute(fresh.database.db)
      ).rows[0]?.name;
      expect(index).toBeDefined();
      const stats = await sql<{ pending_pages: number; bytes: string }>`
        select (public.pgstatginindex(${index}::regclass)).pending_pages,
          pg_relation_size(${index}::regclass)::bigint as bytes`.execute(fresh.database.db);
      const pendingPages = Number(stats.rows[0]?.pending_pages);
      const indexBytes = Number(stats.rows[0]?.bytes);
      // The list's pages never hold much more than the limit (a row's entries past it at most).
      expect(pendingPages * 8).toBeLessThanOrEqual(SEARCH_PENDING_LIST_KB + 64);
      expect(indexBytes).toBeLessThan(2 * 1024 * 1024);
    } finally {
      await fresh.cleanup();
    }
  });
});
