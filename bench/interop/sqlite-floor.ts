/**
 * The floor under an import into one SQLite store (issue 19): what SQLite alone takes to write
 * the rows an import writes, beside the `JSON.parse` baseline and the import itself, and what a
 * store built otherwise would change for the import and for the gateway's small commits.
 *
 * Generates the bench's seeded folder (bench/interop's generator), imports its Codex sessions
 * with `verbatim import codex … --into sqlite:<file> --jobs 1` and `--jobs 2`
 * (bench/interop/phase.ts, a process each), then inserts that store's rows again into fresh
 * stores with better-sqlite3 alone, in the import's shape (128-row statements, transactions of
 * 2 MiB of content, `synchronous=NORMAL`, the search index deferred as during an import), in
 * turns of:
 * - the store as it is (4 KiB pages, foreign keys on, the search trigger's condition per row);
 * - foreign keys off; the search trigger dropped; 16 KiB pages; all three together.
 * Each variant's CPU time is printed with its ratio to the store as it is and the share of the
 * 0.3× budget (the baseline's time / 0.3) it alone takes. Then, for 4 and 16 KiB pages, the
 * p50 of a durable one-row commit (`synchronous=FULL`, a 2 KB message row, 200 commits) into
 * the store just written: the gateway's write path, which a larger page makes write more.
 *
 *   node bin/run-ts.js bench/interop/sqlite-floor.ts [--megabytes 200] [--runs 3]
 *
 * `--megabytes` is the generated folder in all (half of it Codex).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import BetterSqlite3 from "better-sqlite3";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { generateCorpus } from "./generator.js";
import { median, removeStore, runPhase } from "./run-phase.js";

const { values } = parseArgs({
  options: {
    megabytes: { type: "string", default: "200" },
    runs: { type: "string", default: "3" },
  },
});
const megabytes = Number(values.megabytes);
const runs = Number(values.runs);
if (!(megabytes > 0) || !Number.isInteger(runs) || runs < 1) {
  process.stderr.write(
    "bench/interop/sqlite-floor: --megabytes is a positive number, --runs a whole number ≥ 1\n",
  );
  process.exit(2);
}

const TABLES = [
  "ai_gateway_conversations",
  "ai_gateway_branches",
  "ai_gateway_messages",
  "ai_gateway_idempotency_keys",
] as const;
type Table = (typeof TABLES)[number];

interface Variant {
  readonly name: string;
  readonly pageBytes: number;
  readonly foreignKeys: boolean;
  readonly searchTrigger: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: "the store as it is", pageBytes: 4096, foreignKeys: true, searchTrigger: true },
  { name: "foreign keys off", pageBytes: 4096, foreignKeys: false, searchTrigger: true },
  { name: "search trigger dropped", pageBytes: 4096, foreignKeys: true, searchTrigger: false },
  { name: "16 KiB pages", pageBytes: 16_384, foreignKeys: true, searchTrigger: true },
  { name: "all three", pageBytes: 16_384, foreignKeys: false, searchTrigger: false },
];

/** A migrated store whose file was created with `pageBytes` pages. */
async function freshStore(path: string, pageBytes: number): Promise<void> {
  removeStore(path);
  const created = new BetterSqlite3(path);
  created.pragma(`page_size = ${pageBytes}`);
  created.pragma("journal_mode = WAL");
  created.close();
  const database = await openDatabase({ dialect: "sqlite", path }, { poolSize: 1 });
  try {
    await migrateDatabase(database);
  } finally {
    await database.close();
  }
}

interface Rows {
  readonly columns: Record<Table, readonly string[]>;
  readonly values: Record<Table, unknown[][]>;
}

function readRows(path: string): Rows {
  const source = new BetterSqlite3(path, { readonly: true });
  try {
    const columns = {} as Record<Table, readonly string[]>;
    const values = {} as Record<Table, unknown[][]>;
    for (const table of TABLES) {
      const statement = source.prepare(`select * from ${table} order by rowid`).raw();
      columns[table] = statement.columns().map((column) => column.name);
      values[table] = statement.all() as unknown[][];
    }
    return { columns, values };
  } finally {
    source.close();
  }
}

/** Inserts the rows as the import does; returns the CPU seconds it took. */
function insertBare(path: string, rows: Rows, variant: Variant): number {
  const db = new BetterSqlite3(path);
  try {
    db.pragma("synchronous = NORMAL");
    db.pragma(`foreign_keys = ${variant.foreignKeys ? "ON" : "OFF"}`);
    // The import's page cache (store/import-page-cache.ts).
    db.pragma("cache_size = -16384");
    // The search index deferred, as an import defers it (store/search-deferral.ts): the
    // trigger's condition is evaluated for every row and finds the deferral.
    db.prepare(
      "insert into verbatim_search_deferrals (id, table_name, after_rowid, expires_at, owner) values ('bench/ai_gateway_messages', 'ai_gateway_messages', 0, '2999-01-01T00:00:00.000Z', 'bench')",
    ).run();
    if (!variant.searchTrigger) db.exec("drop trigger ai_gateway_messages_search_insert");
    const statements = new Map<string, BetterSqlite3.Statement>();
    const insert = (table: Table, count: number): BetterSqlite3.Statement => {
      const key = `${table}/${count}`;
      let statement = statements.get(key);
      if (statement === undefined) {
        const names = rows.columns[table];
        const row = `(${names.map(() => "?").join(", ")})`;
        statement = db.prepare(
          `insert into ${table} (${names.join(", ")}) values ${Array.from({ length: count }, () => row).join(", ")}`,
        );
        statements.set(key, statement);
      }
      return statement;
    };
    const insertRows = (table: Table, list: readonly unknown[][]): void => {
      let at = 0;
      while (at < list.length) {
        let count = 128;
        while (count > list.length - at) count >>= 1;
        insert(table, count).run(list.slice(at, at + count).flat());
        at += count;
      }
    };
    const contentAt = rows.columns.ai_gateway_messages.indexOf("content");
    const messages = rows.values.ai_gateway_messages;
    const started = process.cpuUsage();
    db.transaction(() => {
      insertRows("ai_gateway_conversations", rows.values.ai_gateway_conversations);
      insertRows("ai_gateway_branches", rows.values.ai_gateway_branches);
    })();
    let at = 0;
    while (at < messages.length) {
      let end = at;
      let bytes = 0;
      while (end < messages.length && bytes < 2 * 1024 * 1024) {
        bytes += String(messages[end]?.[contentAt] ?? "").length;
        end++;
      }
      const part = messages.slice(at, end);
      db.transaction(() => insertRows("ai_gateway_messages", part))();
      at = end;
    }
    db.transaction(() =>
      insertRows("ai_gateway_idempotency_keys", rows.values.ai_gateway_idempotency_keys),
    )();
    // What the import's end does before it returns: everything in the database file.
    db.pragma("wal_checkpoint(TRUNCATE)");
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1e6;
  } finally {
    db.close();
  }
}

/** p50 in ms of a durable one-row commit (a message row of ~2 KB) into the store at `path`. */
function durableCommitP50(path: string, rows: Rows): number {
  const db = new BetterSqlite3(path);
  try {
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    const names = rows.columns.ai_gateway_messages;
    const template = rows.values.ai_gateway_messages.find(
      (row) => String(row[names.indexOf("content")]).length >= 2000,
    );
    if (template === undefined) throw new Error("no message row of 2 KB to copy");
    const statement = db.prepare(
      `insert into ai_gateway_messages (${names.join(", ")}) values (${names.map(() => "?").join(", ")})`,
    );
    const idAt = names.indexOf("id");
    const previousAt = names.indexOf("previous_message_id");
    const depthAt = names.indexOf("depth");
    const timings: number[] = [];
    let previous = template[idAt];
    for (let index = 0; index < 220; index++) {
      const row = [...template];
      row[idAt] = `msg_bench_commit_${index}`;
      row[previousAt] = previous;
      row[depthAt] = 1_000_000 + index;
      const started = performance.now();
      statement.run(row);
      const elapsed = performance.now() - started;
      previous = row[idAt];
      if (index >= 20) timings.push(elapsed);
    }
    return median(timings);
  } finally {
    db.close();
  }
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-sqlite-floor-"));
try {
  const corpus = generateCorpus(join(folder, "sources"), 500, megabytes * 1e6, 19);
  spawnSync("sync");
  const files = corpus.codexFolder;
  const baseline = Math.min(
    runPhase(["baseline", files]).seconds,
    runPhase(["baseline", files]).seconds,
  );
  const source = join(folder, "imported.sqlite");
  const oneThread = runPhase(["codex-sqlite", files, source, "1"]);
  const threaded = join(folder, "imported-2.sqlite");
  const twoThreads = runPhase(["codex-sqlite", files, threaded, "2"]);
  removeStore(threaded);
  const rows = readRows(source);
  const budget = baseline / 0.3;
  process.stdout.write(
    `codex, ${rows.values.ai_gateway_messages.length} messages; baseline (JSON.parse, faster of 2) ${baseline.toFixed(2)} s, so 0.3× is ${budget.toFixed(2)} s\n` +
      `the import --jobs 1: ${oneThread.seconds.toFixed(2)} s (${oneThread.cpuSeconds.toFixed(2)} s CPU); --jobs 2: ${twoThreads.seconds.toFixed(2)} s (${twoThreads.cpuSeconds.toFixed(2)} s CPU)\n`,
  );
  const cpu = new Map<string, number[]>(VARIANTS.map((variant) => [variant.name, []]));
  const commits = new Map<number, number[]>([
    [4096, []],
    [16_384, []],
  ]);
  const target = join(folder, "bare.sqlite");
  for (let run = 0; run < runs; run++) {
    for (const variant of VARIANTS) {
      await freshStore(target, variant.pageBytes);
      const seconds = insertBare(target, rows, variant);
      cpu.get(variant.name)?.push(seconds);
      if (variant.foreignKeys && variant.searchTrigger)
        commits.get(variant.pageBytes)?.push(durableCommitP50(target, rows));
      process.stdout.write(`run ${run + 1}, ${variant.name}: ${seconds.toFixed(2)} s CPU\n`);
    }
  }
  removeStore(target);
  const asItIs = median(cpu.get(VARIANTS[0]?.name ?? "") ?? []);
  process.stdout.write(
    `\n| SQLite alone, the import's rows (median of ${runs}) | CPU s | × the store as it is | share of the 0.3× budget |\n| --- | ---: | ---: | ---: |\n`,
  );
  for (const variant of VARIANTS) {
    const seconds = median(cpu.get(variant.name) ?? []);
    process.stdout.write(
      `| ${variant.name} | ${seconds.toFixed(2)} | ${(seconds / asItIs).toFixed(2)} | ${((seconds / budget) * 100).toFixed(0)}% |\n`,
    );
  }
  process.stdout.write(
    `\n| page size | durable one-row commit p50 (ms, median of ${runs}) |\n| --- | ---: |\n`,
  );
  for (const [pageBytes, list] of commits)
    process.stdout.write(`| ${pageBytes / 1024} KiB | ${median(list).toFixed(3)} |\n`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
