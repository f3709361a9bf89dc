/**
 * How long migration 0021 (the subject in every key, issue 34 item 1) holds a store of about
 * 1 GB (`--gigabytes`), on SQLite and PostgreSQL. The store is filled to migration 0020 with
 * rows shaped like the gateway's: conversations of 20 messages of ~1 KB each across 1,000
 * subjects, a branch each, one job per 10 conversations with a turn of 10 items, and a recorded
 * call per conversation. Then, timed: the migration, while a reader beside it asks for one
 * message every 50 ms; its longest wait is how long the store's readers were held.
 * Baseline, in the same run: reading every row of the tables the migration rewrites once
 * (`count(*)` over the messages' `content`, as the copy must).
 *
 *   node bin/run-ts.js bench/store/subject-keys-migration.ts [--gigabytes 1] [--dialects sqlite,postgres]
 */
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { seedChunk, SEED_CHUNK } from "../workload/store-rows.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import {
  freshDatabase,
  type FreshDatabase,
  type TestDialect,
} from "../../test/support/databases.js";

const { values } = parseArgs({
  options: {
    gigabytes: { type: "string", default: "1" },
    dialects: { type: "string", default: "sqlite,postgres" },
  },
});
const TARGET_BYTES = Number(values.gigabytes) * 1024 ** 3;
const CHUNK = SEED_CHUNK;
const log = (text: string) => process.stderr.write(`${text}\n`);

async function storeBytes(fresh: FreshDatabase): Promise<number> {
  const { database } = fresh;
  if (database.capabilities.dialect === "sqlite") {
    await sql`pragma wal_checkpoint(truncate)`.execute(database.db);
    const path = fresh.locationText;
    return statSync(path).size;
  }
  const result = await sql<{ bytes: number }>`
    select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
    from pg_class c where c.relnamespace = to_regnamespace(current_schema()) and c.relkind = 'r'`.execute(
    database.db,
  );
  return Number(result.rows[0]?.bytes ?? 0);
}

interface Row {
  dialect: TestDialect;
  bytes: number;
  messages: number;
  seedSeconds: number;
  scanSeconds: number;
  migrateSeconds: number;
  longestReadMs: number;
  longestWriteMs: number;
  failedWrites: number;
}

async function measure(dialect: TestDialect): Promise<Row> {
  const fresh = await freshDatabase(dialect, { migrate: false });
  try {
    const database = fresh.database;
    const before = storeMigrations.findIndex((migration) => migration.name === "0021-subject-keys");
    await migrateDatabase(database, storeMigrations.slice(0, before));
    // The full-text index is left out while seeding (it is not rewritten by the migration).
    await sql`insert into verbatim_search_deferrals (id, table_name, after_rowid, expires_at, owner)
      values ('seed-m', 'ai_gateway_messages', 0, '9999-01-01T00:00:00.000Z', 'bench'),
             ('seed-i', 'background_agent_job_turn_items', 0, '9999-01-01T00:00:00.000Z', 'bench')`
      .execute(database.db)
      .catch(() => undefined);
    const seedStarted = performance.now();
    let conversations = 0;
    for (;;) {
      await seedChunk(database, conversations, conversations + CHUNK);
      conversations += CHUNK;
      if (conversations % (CHUNK * 5) === 0) {
        const bytes = await storeBytes(fresh);
        log(
          `${dialect}: ${(conversations * 20).toLocaleString("en")} messages, ${(bytes / 1024 ** 2).toFixed(0)} MiB`,
        );
        if (bytes >= TARGET_BYTES) break;
      }
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    await sql`analyze`.execute(database.db);
    const bytes = await storeBytes(fresh);

    const scanStarted = performance.now();
    await sql`select count(*), sum(length(cast(content as text))) from ai_gateway_messages`.execute(
      database.db,
    );
    const scanSeconds = (performance.now() - scanStarted) / 1000;

    // Other connections read one message, and write to one conversation, every 50 ms while the
    // migration runs.
    const reader = await openDatabase(fresh.location);
    const writer = await openDatabase(fresh.location);
    const probe = `c${conversations - 1}`;
    let running = true;
    const probeLoop = async (work: () => Promise<unknown>) => {
      let longest = 0;
      let failed = 0;
      while (running) {
        const started = performance.now();
        await work().catch(() => {
          failed += 1;
        });
        longest = Math.max(longest, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { longest, failed };
    };
    const reading = probeLoop(() =>
      sql`select id from ai_gateway_messages where id = ${`m${probe.slice(1)}-3`}`.execute(
        reader.db,
      ),
    );
    const writing = probeLoop(() =>
      sql`update ai_gateway_conversations set metadata = metadata where id = ${probe}`.execute(
        writer.db,
      ),
    );
    const started = performance.now();
    log(`${dialect}: migrating ${(bytes / 1024 ** 2).toFixed(0)} MiB`);
    await migrateDatabase(database);
    const migrateSeconds = (performance.now() - started) / 1000;
    running = false;
    const read = await reading;
    const write = await writing;
    await reader.close();
    await writer.close();
    return {
      dialect,
      bytes,
      messages: conversations * 20,
      seedSeconds,
      scanSeconds,
      migrateSeconds,
      longestReadMs: read.longest,
      longestWriteMs: write.longest,
      failedWrites: write.failed,
    };
  } finally {
    await fresh.cleanup();
  }
}

const rows: Row[] = [];
for (const dialect of (values.dialects ?? "").split(",") as TestDialect[])
  rows.push(await measure(dialect));
const out = [
  "Migration 0021 (the subject in every key) on a filled store",
  "",
  "| dialect | store | messages | read every message (baseline) | migration | ratio | longest wait of a reader | of a writer |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...rows.map(
    (row) =>
      `| ${row.dialect} | ${(row.bytes / 1024 ** 3).toFixed(2)} GiB | ${row.messages.toLocaleString("en")} | ` +
      `${row.scanSeconds.toFixed(1)} s | ${row.migrateSeconds.toFixed(1)} s | ${(row.migrateSeconds / row.scanSeconds).toFixed(1)}× | ` +
      `${(row.longestReadMs / 1000).toFixed(1)} s | ${(row.longestWriteMs / 1000).toFixed(1)} s` +
      `${row.failedWrites > 0 ? ` (${row.failedWrites} failed: busy)` : ""} |`,
  ),
];
process.stdout.write(`${out.join("\n")}\n`);
