// The gateway message store on SQLite and PostgreSQL (docs/store.md), against the LangGraph.js
// checkpointers storing the same conversation, measured in the same run.
// Run: node bin/run-ts.js bench/store/run.ts [--pg-url URL] [--no-pg] [--quick]
// PostgreSQL: --pg-url, else VERBATIM_PG_URL, else postgres://postgres@127.0.0.1:5432/test.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import { GatewayMessageStore, type AppendMessageInput } from "../../src/gateway/message-store.js";
import type { Message } from "../../src/history/message.js";
import { openDatabase, type StoreDatabase } from "../../src/store/database.js";
import type { DatabaseLocation } from "../../src/store/location.js";
import { migrateDatabase } from "../../src/store/migrate.js";
import { inTransaction } from "../../src/store/transaction.js";
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
const BASELINE_TURNS = quick ? 20 : 100;

/**
 * Two seeded workloads (bench/workload): "tool turns", each turn a user message, an assistant
 * message with 2 tool calls (~300-byte arguments), a tool message with 2 results (~2 KB each)
 * and a final answer (~5.6 KB of JSON per turn); and "chat", the same turns with every message
 * cut to its first text block of at most 200 characters (~0.9 KB per turn).
 */
const toolMessages: Message[] = generateConversation({
  turns: Math.max(...LENGTHS) / 4 + SAMPLES + BASELINE_TURNS + 10,
  seed: 1,
  imageEvery: 0,
}).conversation.history.map(wellFormed);
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

/**
 * The workload cuts its texts at a UTF-16 length, which can split an emoji and leave a lone
 * surrogate; the store refuses those (not valid Unicode), so they become U+FFFD here.
 */
function wellFormed(message: Message): Message {
  const fix = (text: string) =>
    text.replace(
      /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      "\uFFFD",
    );
  return {
    role: message.role,
    content: message.content.map((block) => {
      switch (block.type) {
        case "text":
          return { ...block, text: fix(block.text) };
        case "toolCall":
          return "arguments" in block ? { ...block, arguments: fix(block.arguments) } : block;
        case "toolResult":
          return "content" in block ? { ...block, content: fix(block.content) } : block;
        default:
          return block;
      }
    }),
  };
}

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

/**
 * The floor under every durable append: the median time of a bare transaction that inserts one
 * small row and commits, on the same database (SQLite: the same file, WAL, synchronous=FULL;
 * PostgreSQL: synchronous_commit as configured). Its cost is mostly the fsync of the commit.
 */
async function commitFloor(database: StoreDatabase): Promise<number> {
  await sql`create table if not exists bench_floor (id integer primary key, value text)`.execute(
    database.db,
  );
  const samples: number[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    const start = now();
    await inTransaction(database, (trx) =>
      sql`insert into bench_floor (id, value) values (${index}, 'x')`.execute(trx),
    );
    samples.push(now() - start);
  }
  await sql`drop table bench_floor`.execute(database.db);
  return median(samples);
}

async function measure(target: Target, results: Results): Promise<void> {
  const { store } = target;
  const add = (measurement: string, value: string, goal: string, verdict: string) =>
    results.rows.push([`${target.name}: ${measurement}`, value, goal, verdict]);
  const floor = await commitFloor(target.database);
  add("floor: bare 1-row transaction + commit (median)", `${floor.toFixed(2)} ms`, "", "");

  // Throughput, one message per transaction and one turn of 4 per transaction.
  let previous = await buildChain(target, toolMessages, 4);
  const single: number[] = [];
  for (let index = 0; index < SAMPLES * 4; index++) {
    const start = now();
    const [stored] = await store.appendMessages("bench", {
      previousMessageId: previous,
      messages: [asInput(toolMessages[(index + 4) % toolMessages.length] as Message)],
    });
    single.push(now() - start);
    previous = stored?.id ?? "";
  }
  const singleSum = single.reduce((a, b) => a + b, 0);
  add(
    "append, 1 message per transaction",
    `${((single.length / singleSum) * 1000).toFixed(0)} messages/s`,
    "",
    "",
  );
  const turns: number[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    const turn = toolMessages.slice(index * 4, index * 4 + 4).map(asInput);
    const start = now();
    const stored = await store.appendMessages("bench", {
      previousMessageId: previous,
      messages: turn,
    });
    turns.push(now() - start);
    previous = stored[3]?.id ?? "";
  }
  const turnSum = turns.reduce((a, b) => a + b, 0);
  add(
    "append, turn of 4 per transaction",
    `${((turns.length * 4 * 1000) / turnSum).toFixed(0)} messages/s`,
    "",
    "",
  );
  const turnGoal = target.name === "SQLite" ? 1 : 5;
  const turnMedian = median(turns);
  add(
    "append a turn of 4 (median)",
    `${turnMedian.toFixed(2)} ms (${(turnMedian - floor).toFixed(2)} above floor)`,
    `< ${turnGoal} ms`,
    turnMedian < turnGoal ? "met" : "NOT met",
  );
  if (target.name === "SQLite") {
    // The same appends without the per-commit fsync, to show the store's own cost.
    await sql`pragma synchronous = NORMAL`.execute(target.database.db);
    const relaxed: number[] = [];
    for (let index = 0; index < SAMPLES; index++) {
      const turn = toolMessages.slice(index * 4, index * 4 + 4).map(asInput);
      const start = now();
      const stored = await store.appendMessages("bench", {
        previousMessageId: previous,
        messages: turn,
      });
      relaxed.push(now() - start);
      previous = stored[3]?.id ?? "";
    }
    await sql`pragma synchronous = FULL`.execute(target.database.db);
    const relaxedMedian = median(relaxed);
    add(
      "append a turn of 4, synchronous=NORMAL (no fsync; not the default)",
      `${relaxedMedian.toFixed(2)} ms`,
      "< 1 ms",
      relaxedMedian < 1 ? "met" : "NOT met",
    );
  }

  // Append cost and context reads at 100, 1,000 and 10,000 messages.
  for (const [label, messages] of [
    ["tool turns", toolMessages],
    ["chat", chatMessages],
  ] as const) {
    const appendAt: number[] = [];
    for (const length of LENGTHS) {
      let tip = await buildChain(target, messages, length);
      const samples: number[] = [];
      for (let index = 0; index < SAMPLES; index++) {
        const offset = length + index * 4;
        const turn = messages.slice(offset, offset + 4).map(asInput);
        const start = now();
        const stored = await store.appendMessages("bench", {
          previousMessageId: tip,
          messages: turn,
        });
        samples.push(now() - start);
        tip = stored[3]?.id ?? "";
      }
      appendAt.push(median(samples));
      add(
        `append a turn at ${length.toLocaleString("en")} messages (${label})`,
        `${median(samples).toFixed(2)} ms`,
        "",
        "",
      );
      if (length >= 1_000) {
        const deep = await buildChain(target, messages, length);
        const reads: number[] = [];
        for (let index = 0; index < Math.min(SAMPLES, 11); index++) {
          const start = now();
          const context = await store.readContext("bench", deep);
          reads.push(now() - start);
          if (context.messages.length !== length) throw new Error("wrong context length");
        }
        const read = median(reads);
        const goal = length === 10_000 ? "< 50 ms" : "";
        add(
          `read the context ${length.toLocaleString("en")} deep (${label})`,
          `${read.toFixed(1)} ms`,
          goal,
          goal === "" ? "" : read < 50 ? "met" : "NOT met",
        );
      }
    }
    const ratio = (appendAt[appendAt.length - 1] ?? 0) / (appendAt[0] ?? 1);
    add(
      `append cost, ${LENGTHS[LENGTHS.length - 1]?.toLocaleString("en")} vs 100 messages (${label})`,
      `${ratio.toFixed(2)}×`,
      "≤ 1.5×",
      ratio <= 1.5 ? "met" : "NOT met",
    );
  }

  // The same conversation turn by turn: LangGraph checkpointer vs the store, at BASELINE_TURNS.
  const checkpointer = await target.checkpointer();
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
      if (anchor !== null) await store.readContext("bench", anchor);
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
    `${SAMPLES} samples per median; SQLite WAL + synchronous=FULL (both stores)\n\n`,
);
process.stdout.write(
  `${line(header)}\n|${widths.map((width) => "-".repeat(width + 2)).join("|")}|\n`,
);
for (const row of results.rows) process.stdout.write(`${line(row)}\n`);
