// Background agent job trajectories (docs/trajectories.md): append throughput on SQLite and
// PostgreSQL, and projection throughput for a 10,000-item trajectory (goal: under 50 ms).
// Run: node bin/run-ts.js bench/trajectory/run.ts [--pg-url URL] [--no-pg] [--quick]
// PostgreSQL: --pg-url, else VERBATIM_PG_URL, else postgres://postgres@127.0.0.1:5432/test.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import {
  defaultSanitizer,
  modelVisibleJson,
  modelVisibleTrajectory,
  projectTrajectoryToChatML,
} from "../../packages/library/src/trajectory/index.js";
import { generateTrajectory } from "./workload.js";

const { values } = parseArgs({
  options: {
    "pg-url": { type: "string" },
    "no-pg": { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
  },
});
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const quick = values.quick === true;
const ITEMS = 10_000;
const SAMPLES = quick ? 9 : 31;
const SINGLE_APPENDS = quick ? 300 : 2_000;
const BATCH = 100;
const BATCHES = quick ? 10 : 50;

const now = () => Number(process.hrtime.bigint()) / 1e6;
function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
/** Median wall time and median CPU time (user + system) of one run, in ms. CPU time is what
 *  the work costs when the machine is shared (wall time then includes waiting for a core). */
function timeMedian(work: () => unknown): { wall: number; cpu: number } {
  for (let index = 0; index < 3; index++) work();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    const usage = process.cpuUsage();
    const start = now();
    work();
    wall.push(now() - start);
    const spent = process.cpuUsage(usage);
    cpu.push((spent.user + spent.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}
const fmt = (value: number, digits = 1) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const perSecond = (count: number, ms: number) =>
  Math.round((count / ms) * 1000).toLocaleString("en-US");

const rows = generateTrajectory({ items: ITEMS, turns: 10, seed: 7 });
const bytes = Buffer.byteLength(JSON.stringify(rows));
process.stdout.write(
  `machine: ${cpus().length} cores, load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")}; ` +
    `workload: ${ITEMS.toLocaleString("en-US")} items in 10 turns (${(bytes / 1e6).toFixed(1)} MB of rows), seed 7\n\n`,
);

// ── Projection ────────────────────────────────────────────────────────────────────────────
const chatmlView = projectTrajectoryToChatML(rows);
const visibleView = modelVisibleTrajectory(chatmlView);
const steps: [string, { wall: number; cpu: number }][] = [
  ["JSON.stringify(rows) (baseline)", timeMedian(() => JSON.stringify(rows))],
  ["stored rows → ChatML", timeMedian(() => projectTrajectoryToChatML(rows))],
  ["ChatML → model-visible", timeMedian(() => modelVisibleTrajectory(chatmlView))],
  [
    "stored rows → model-visible (the projection)",
    timeMedian(() => modelVisibleTrajectory(projectTrajectoryToChatML(rows))),
  ],
  ["model-visible → JSON bytes", timeMedian(() => modelVisibleJson(visibleView))],
  [
    "sanitize every item (default rules)",
    timeMedian(() => {
      for (const row of rows) defaultSanitizer.sanitizeItem(row.item);
    }),
  ],
];
const baseline = steps[0]?.[1].cpu ?? Number.NaN;
process.stdout.write(`Projection of a 10,000-item trajectory (median of ${SAMPLES} runs)\n\n`);
process.stdout.write(
  "| step | wall ms | CPU ms | items/s (CPU) | CPU vs JSON.stringify(rows) |\n| --- | ---: | ---: | ---: | ---: |\n",
);
for (const [name, time] of steps) {
  process.stdout.write(
    `| ${name} | ${fmt(time.wall)} | ${fmt(time.cpu)} | ${perSecond(ITEMS, time.cpu)} | ${fmt(time.cpu / baseline, 2)}× |\n`,
  );
}
const projection = steps[3]?.[1] ?? { wall: Number.NaN, cpu: Number.NaN };
process.stdout.write(
  `\ngoal: projecting 10,000 items under 50 ms: ${projection.cpu < 50 ? "met" : "NOT met"} ` +
    `(${fmt(projection.cpu)} ms CPU, ${fmt(projection.wall)} ms wall)\n\n`,
);

// ── Appends ───────────────────────────────────────────────────────────────────────────────
interface Target {
  readonly name: string;
  readonly database: StoreDatabase;
  cleanup(): Promise<void>;
}

async function openSqlite(): Promise<Target> {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-trajectory-"));
  const database = await openDatabase({ dialect: "sqlite", path: join(folder, "store.sqlite") });
  await migrateDatabase(database);
  return {
    name: "SQLite",
    database,
    cleanup: async () => {
      await database.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Target | undefined> {
  const schema = `verbatim_bench_trajectory_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  try {
    await admin.connect();
  } catch (error) {
    process.stdout.write(`PostgreSQL skipped: cannot connect to ${pgUrl} (${String(error)})\n`);
    return undefined;
  }
  await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`);
  const database = await openDatabase({ dialect: "postgres", url: pgUrl, schema }, { poolSize: 4 });
  await migrateDatabase(database);
  return {
    name: "PostgreSQL",
    database,
    cleanup: async () => {
      await database.close();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    },
  };
}

const inputs = rows.map((row, index) => ({ item_key: `k${index}`, item: row.item }));

async function measureAppends(target: Target) {
  const gateway = new GatewayMessageStore(target.database);
  const jobs = new BackgroundAgentJobs(target.database);
  const conversation = await gateway.createConversation("bench");
  const job = await jobs.createJob("bench", { conversationId: conversation.id, retryBudget: 0 });
  await jobs.startAttempt("bench", job.id);

  // One item per transaction, into one turn.
  const single = await jobs.startTurn("bench", job.id);
  let start = now();
  for (let index = 0; index < SINGLE_APPENDS; index++) {
    await jobs.appendItems("bench", single.turn.id, [
      inputs[index % inputs.length] ?? { item_key: "x", item: { type: "error", message: "x" } },
    ]);
  }
  const singleMs = now() - start;

  // Batches of 100 items per transaction, into another turn.
  const batched = await jobs.startTurn("bench", job.id);
  start = now();
  for (let batch = 0; batch < BATCHES; batch++) {
    await jobs.appendItems(
      "bench",
      batched.turn.id,
      inputs
        .slice(batch * BATCH, (batch + 1) * BATCH)
        .map((input) => ({ ...input, item_key: `b${input.item_key}` })),
    );
  }
  const batchMs = now() - start;

  // Baseline: the same single-item transactions as bare INSERTs (no lock, no validation, no
  // sanitizer, no idempotency check), into a third turn.
  const bare = await jobs.startTurn("bench", job.id);
  const { inTransaction } = await import("../../packages/server/src/store/transaction.js");
  start = now();
  for (let index = 0; index < SINGLE_APPENDS; index++) {
    const input = inputs[index % inputs.length];
    await inTransaction(target.database, (db) =>
      db
        .insertInto("background_agent_job_turn_items")
        .values({
          turn_id: bare.turn.id,
          position: index,
          revision: 1,
          item_key: `r${index}`,
          item: JSON.stringify(input?.item ?? null),
          subject_uid: "bench",
          job_id: job.id,
          created_at: new Date().toISOString(),
        })
        .execute(),
    );
  }
  const bareMs = now() - start;
  return { singleMs, batchMs, bareMs };
}

const targets: Target[] = [await openSqlite()];
if (values["no-pg"] !== true) {
  const postgres = await openPostgres();
  if (postgres !== undefined) targets.push(postgres);
}
process.stdout.write(
  `Appends (${SINGLE_APPENDS.toLocaleString("en-US")} single-item transactions; ${BATCHES} transactions of ${BATCH} items)\n\n`,
);
process.stdout.write(
  "| database | 1 item/txn: items/s | ms per append | bare INSERT baseline: items/s | vs baseline | 100 items/txn: items/s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
);
for (const target of targets) {
  try {
    const { singleMs, batchMs, bareMs } = await measureAppends(target);
    process.stdout.write(
      `| ${target.name} | ${perSecond(SINGLE_APPENDS, singleMs)} | ${fmt(singleMs / SINGLE_APPENDS, 2)} | ${perSecond(SINGLE_APPENDS, bareMs)} | ${fmt(singleMs / bareMs, 2)}× slower | ${perSecond(BATCHES * BATCH, batchMs)} |\n`,
    );
  } finally {
    await target.cleanup();
  }
}
