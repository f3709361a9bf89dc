// The gateway message store on SQLite and PostgreSQL (docs/store.md), against the LangGraph.js
// checkpointers storing the same conversation, measured in the same run.
// Run: node bin/run-ts.js bench/store/run.ts [--pg-url URL] [--no-pg] [--quick]
// PostgreSQL: --pg-url, else VERBATIM_PG_URL, else postgres://postgres@127.0.0.1:5432/test.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import {
  GatewayMessageStore,
  type AppendMessageInput,
} from "../../packages/server/src/gateway/conversations/message-store.js";
import type { Message } from "../../packages/library/src/history/message.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { inTransaction } from "../../packages/server/src/store/transaction.js";
import { generateConversation } from "../workload/conversation.js";
import { postgresCheckpointer, sqliteCheckpointer, type Checkpointer } from "./langgraph.js";

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
const LENGTHS = quick ? [100, 1_000] : [100, 1_000, 10_000];
const SAMPLES = quick ? 15 : 41;
/** Appends are cheap: more samples, after a warm-up (the JIT's steady state, as in a server). */
const APPEND_SAMPLES = quick ? 41 : 201;
const WARM_UP_TURNS = quick ? 50 : 300;
const BASELINE_TURNS = quick ? 20 : 100;

/**
 * Two seeded workloads (bench/workload): "tool turns", each turn a user message, an assistant
 * message with 2 tool calls (~300-byte arguments), a tool message with 2 results (~2 KB each)
 * and a final answer (~5.6 KB of JSON per turn); and "chat", the same turns with every message
 * cut to its first text block of at most 200 characters (~0.9 KB per turn).
 */
const toolMessages: Message[] = generateConversation({
  turns: Math.max(...LENGTHS) / 4 + APPEND_SAMPLES + WARM_UP_TURNS + BASELINE_TURNS + 10,
  seed: 1,
  imageEvery: 0,
}).conversation.history;
const chatMessages: Message[] = toolMessages.map((message) => {
  const first = message.content.find((block) => block.type === "text");
  return {
    role: message.role === "tool" ? "user" : message.role,
    content: [
      {
        type: "text",
        text: first?.type === "text" ? [...first.text].slice(0, 200).join("") : "ok",
      },
    ],
  };
});

const asInput = (message: Message): AppendMessageInput => ({
  role: message.role,
  content: message.content,
});

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
const now = () => Number(process.hrtime.bigint()) / 1e6;

interface Target {
  readonly name: "SQLite" | "PostgreSQL";
  readonly database: StoreDatabase;
  readonly store: GatewayMessageStore;
  readonly checkpointer: () => Promise<Checkpointer>;
  cleanup(): Promise<void>;
}

async function openTarget(name: Target["name"]): Promise<Target> {
  if (name === "SQLite") {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-store-"));
    const database = await openDatabase({ dialect: "sqlite", path: join(folder, "store.sqlite") });
    await migrateDatabase(database);
    return {
      name,
      database,
      store: new GatewayMessageStore(database),
      checkpointer: async () => sqliteCheckpointer(join(folder, "langgraph.sqlite")),
      async cleanup() {
        await database.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  const schema = `verbatim_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`);
  const location: DatabaseLocation = { dialect: "postgres", url: pgUrl, schema };
  const database = await openDatabase(location, { poolSize: 4 });
  await migrateDatabase(database);
  return {
    name,
    database,
    store: new GatewayMessageStore(database),
    checkpointer: () => postgresCheckpointer(pgUrl, `${schema}_langgraph`),
    async cleanup() {
      await database.close();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    },
  };
}

/** Builds a chain of `length` messages (writes of 256) and returns its tip. */
async function buildChain(target: Target, messages: readonly Message[], length: number) {
  let previous: string | null = null;
  for (let start = 0; start < length; start += 256) {
    const batch = messages.slice(start, Math.min(length, start + 256)).map(asInput);
    const stored = await target.store.appendMessages("bench", {
      previousMessageId: previous,
      messages: batch,
    });
    previous = stored[stored.length - 1]?.id ?? null;
  }
  return previous ?? "";
}

interface Results {
  readonly rows: [string, string, string, string][];
}

/** Wall-clock and process CPU milliseconds of one call. */
async function timed<T>(run: () => Promise<T>): Promise<{ wall: number; cpu: number; value: T }> {
  const cpuStart = process.cpuUsage();
  const start = now();
  const value = await run();
  const wall = now() - start;
  const cpu = process.cpuUsage(cpuStart);
  return { wall, cpu: (cpu.user + cpu.system) / 1000, value };
}

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

async function measure(target: Target, results: Results): Promise<void> {
  const { store, database } = target;
  const add = (measurement: string, value: string, goal: string, verdict: string) =>
    results.rows.push([`${target.name}: ${measurement}`, value, goal, verdict]);

  // The floor under every durable append, sampled in turn with the appends so that both see
  // the same load: a bare transaction that inserts one small row and commits (SQLite: same
  // file, WAL, synchronous=FULL). Its cost is mostly the commit's fsync.
  await sql`create table if not exists bench_floor (id integer primary key, value text)`.execute(
    database.db,
  );
  let previous = await buildChain(target, toolMessages, 4);
  for (let index = 0; index < WARM_UP_TURNS; index++) {
    const stored = await store.appendMessages("bench", {
      previousMessageId: previous,
      messages: toolMessages.slice(index * 4, index * 4 + 4).map(asInput),
    });
    previous = stored[3]?.id ?? "";
  }
  const floor: number[] = [];
  const single: number[] = [];
  const turns: number[] = [];
  const turnCpu: number[] = [];
  for (let index = 0; index < APPEND_SAMPLES; index++) {
    floor.push(
      (
        await timed(() =>
          inTransaction(database, (trx) =>
            sql`insert into bench_floor (id, value) values (${index}, 'x')`.execute(trx),
          ),
        )
      ).wall,
    );
    const one = await timed(() =>
      store.appendMessages("bench", {
        previousMessageId: previous,
        messages: [asInput(toolMessages[index % toolMessages.length] as Message)],
      }),
    );
    single.push(one.wall);
    previous = one.value[0]?.id ?? "";
    const turn = await timed(() =>
      store.appendMessages("bench", {
        previousMessageId: previous,
        messages: toolMessages.slice(index * 4, index * 4 + 4).map(asInput),
      }),
    );
    turns.push(turn.wall);
    turnCpu.push(turn.cpu);
    previous = turn.value[3]?.id ?? "";
  }
  await sql`drop table bench_floor`.execute(database.db);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  add("floor: bare 1-row transaction + commit (median)", ms(median(floor)), "", "");
  add(
    "append, 1 message per transaction",
    `${((single.length * 1000) / sum(single)).toFixed(0)} messages/s`,
    "",
    "",
  );
  add(
    "append, turn of 4 per transaction",
    `${((turns.length * 4 * 1000) / sum(turns)).toFixed(0)} messages/s`,
    "",
    "",
  );
  const turnGoal = target.name === "SQLite" ? 1 : 5;
  const turnMedian = median(turns);
  add(
    "append a turn of 4 (median)",
    `${ms(turnMedian)} (floor ${ms(median(floor))}; CPU ${ms(median(turnCpu))})`,
    `< ${turnGoal} ms`,
    turnMedian < turnGoal ? "met" : "NOT met",
  );
  if (target.name === "SQLite") {
    // The same appends without the per-commit fsync, to show the store's own cost.
    await sql`pragma synchronous = NORMAL`.execute(database.db);
    const relaxed: number[] = [];
    for (let index = 0; index < APPEND_SAMPLES; index++) {
      const turn = await timed(() =>
        store.appendMessages("bench", {
          previousMessageId: previous,
          messages: toolMessages.slice(index * 4, index * 4 + 4).map(asInput),
        }),
      );
      relaxed.push(turn.wall);
      previous = turn.value[3]?.id ?? "";
    }
    await sql`pragma synchronous = FULL`.execute(database.db);
    const relaxedMedian = median(relaxed);
    add(
      "append a turn of 4, synchronous=NORMAL (no fsync; not the default)",
      ms(relaxedMedian),
      "< 1 ms",
      relaxedMedian < 1 ? "met" : "NOT met",
    );
  }

  // Append cost at 100, 1,000 and 10,000 messages, sampled round-robin over the three
  // conversations; then context reads of the anchors 1,000 and 10,000 deep, also in turn.
  for (const [label, messages] of [
    ["tool turns", toolMessages],
    ["chat", chatMessages],
  ] as const) {
    const deep: string[] = [];
    for (const length of LENGTHS) deep.push(await buildChain(target, messages, length));
    const tips = [...deep];
    const appendAt: number[][] = LENGTHS.map(() => []);
    for (let index = 0; index < SAMPLES; index++) {
      for (const [position, length] of LENGTHS.entries()) {
        const offset = length + index * 4;
        const turn = await timed(() =>
          store.appendMessages("bench", {
            previousMessageId: tips[position] ?? null,
            messages: messages.slice(offset, offset + 4).map(asInput),
          }),
        );
        appendAt[position]?.push(turn.wall);
        tips[position] = turn.value[3]?.id ?? "";
      }
    }
    for (const [position, length] of LENGTHS.entries()) {
      add(
        `append a turn at ${length.toLocaleString("en")} messages (${label})`,
        ms(median(appendAt[position] ?? [])),
        "",
        "",
      );
    }
    const first = median(appendAt[0] ?? []);
    const last = median(appendAt[LENGTHS.length - 1] ?? []);
    add(
      `append cost, ${LENGTHS[LENGTHS.length - 1]?.toLocaleString("en")} vs 100 messages (${label})`,
      `${(last / first).toFixed(2)}×`,
      "≤ 1.5×",
      last / first <= 1.5 ? "met" : "NOT met",
    );
    // Cold: a store without message cache reads every row from the database and parses it.
    // First read: the same into a new store's empty cache (a server just started).
    // Warm: the store that wrote the chain (as a server reads the context of the response it
    // just wrote); its cache holds the parsed messages and only the anchor is looked up.
    // First read: a new store (empty cache) each time, which parses the rows and keeps them.
    const cold = new GatewayMessageStore(database, { cacheBytes: 0 });
    for (const [kind, reader] of [
      ["cold, from the database", () => cold],
      ["first read, into an empty message cache", () => new GatewayMessageStore(database)],
      ["warm, from the message cache", () => store],
    ] as const) {
      const reads = LENGTHS.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
      for (let round = 0; round < Math.min(SAMPLES, 11); round++) {
        for (const [position, length] of LENGTHS.entries()) {
          if (length < 1_000) continue;
          const instance = reader();
          const read = await timed(() => instance.readContext("bench", deep[position] ?? ""));
          if (read.value.messages.length !== length) throw new Error("wrong context length");
          reads[position]?.wall.push(read.wall);
          reads[position]?.cpu.push(read.cpu);
        }
      }
      for (const [position, length] of LENGTHS.entries()) {
        if (length < 1_000) continue;
        const wall = median(reads[position]?.wall ?? []);
        const goal = length === 10_000 ? "< 50 ms" : "";
        add(
          `read the context ${length.toLocaleString("en")} deep (${label}; ${kind})`,
          `${ms(wall)} (CPU ${ms(median(reads[position]?.cpu ?? []))})`,
          goal,
          goal === "" ? "" : wall < 50 ? "met" : "NOT met",
        );
      }
    }
  }

  // The same conversation turn by turn: LangGraph checkpointer vs the store, at BASELINE_TURNS.
  const checkpointer = await target.checkpointer();
  const coldReader = new GatewayMessageStore(database, { cacheBytes: 0 });
  try {
    const tail = 5;
    const theirs: number[] = [];
    const ours: number[] = [];
    let anchor: string | null = null;
    for (let turn = 0; turn < BASELINE_TURNS; turn++) {
      const soFar = toolMessages.slice(0, (turn + 1) * 4);
      let start = now();
      await checkpointer.storeTurn(turn, soFar);
      if (turn >= BASELINE_TURNS - tail) theirs.push(now() - start);
      start = now();
      // Read from the database (no message cache), as the checkpointer reads its checkpoint.
      if (anchor !== null) await coldReader.readContext("bench", anchor);
      const stored = await store.appendMessages("bench", {
        previousMessageId: anchor,
        messages: soFar.slice(-4).map(asInput),
      });
      anchor = stored[3]?.id ?? "";
      if (turn >= BASELINE_TURNS - tail) ours.push(now() - start);
    }
    const theirMean = theirs.reduce((a, b) => a + b, 0) / theirs.length;
    const ourMean = ours.reduce((a, b) => a + b, 0) / ours.length;
    add(
      `${checkpointer.name}, turn ${BASELINE_TURNS} (read + store)`,
      `${theirMean.toFixed(2)} ms`,
      "baseline",
      "1.00",
    );
    add(
      `store, turn ${BASELINE_TURNS} (read context + append turn)`,
      `${ourMean.toFixed(2)} ms`,
      "faster",
      `${(theirMean / ourMean).toFixed(1)}× faster`,
    );
  } finally {
    await checkpointer.close();
  }
}

const results: Results = { rows: [] };
const loadBefore = loadavg()
  .map((value) => value.toFixed(1))
  .join(" ");
for (const name of ["SQLite", "PostgreSQL"] as const) {
  if (name === "PostgreSQL" && values["no-pg"] === true) continue;
  const target = await openTarget(name);
  try {
    await measure(target, results);
  } finally {
    await target.cleanup();
  }
}
const loadAfter = loadavg()
  .map((value) => value.toFixed(1))
  .join(" ");

const header: [string, string, string, string] = ["measurement", "value", "goal", "result"];
const widths = header.map((title, column) =>
  Math.max(title.length, ...results.rows.map((row) => row[column]?.length ?? 0)),
);
const line = (row: readonly string[]) =>
  `| ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
process.stdout.write(
  `bench/store: ${cpus().length} CPUs, load average ${loadBefore} before, ${loadAfter} after; ` +
    `appends: ${APPEND_SAMPLES} samples per median after ${WARM_UP_TURNS} warm-up turns; ` +
    `reads: ${Math.min(SAMPLES, 11)} samples; SQLite WAL + synchronous=FULL (both stores)\n\n`,
);
process.stdout.write(
  `${line(header)}\n|${widths.map((width) => "-".repeat(width + 2)).join("|")}|\n`,
);
for (const row of results.rows) process.stdout.write(`${line(row)}\n`);

// What the query templates save on the statement every response finishes with, what named
// prepared statements save on PostgreSQL, and the floor under the cold tool-turn read.
for (const [title, script, args] of [
  ["Query templates", "bench/store/query-template.ts", []],
  ...(values["no-pg"] === true
    ? []
    : [
        [
          "Named prepared statements on PostgreSQL",
          "bench/store/prepared-statements.ts",
          ["--pg-url", pgUrl],
        ] as const,
      ]),
  ["The floor under the cold tool-turn read", "bench/store/cold-read-floor.ts", []],
] as const) {
  process.stdout.write(`\n${title} (${script}):\n`);
  const part = spawnSync(process.execPath, ["bin/run-ts.js", script, ...args], {
    cwd: new URL("../../", import.meta.url).pathname,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (part.status !== 0) process.exitCode = 1;
}
