/**
 * Partitioned against unpartitioned PostgreSQL (issue 34 item 2; docs/scale.md, "Partitions"):
 * stores of the same rows (bench/workload/store-rows.ts: 1,000 subjects, conversations of
 * 20 messages, `--messages` in all, default 1,000,000; `--quick` 100,000): one unpartitioned,
 * and one hash-partitioned by subject into each count `--partitions` lists (default 4,16).
 * Timed through the gateway's own store, blocks of 50 taking turns between the stores, p50 of
 * each:
 * - append a turn (a user message and an answer) to the tip of a random conversation, each
 *   conversation once;
 * - read the context of a random conversation's tip.
 * Goal: each ≤ 1.1× the unpartitioned store's.
 *
 *   node bin/run-ts.js bench/scale/partitions.ts [--quick] [--messages N] [--partitions 4,16] [--samples 400]
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { partitionBySubject } from "../../packages/server/src/store/partitions.js";
import { freshDatabase, type FreshDatabase } from "../../test/support/databases.js";
import { SEED_CHUNK, SEED_DEPTH, SEED_SUBJECTS, seedChunk } from "../workload/store-rows.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    messages: { type: "string" },
    partitions: { type: "string", default: "4,16" },
    samples: { type: "string" },
  },
});
const MESSAGES = Number(values.messages ?? (values.quick === true ? 100_000 : 1_000_000));
const PARTITIONS = values.partitions.split(",").map(Number);
if (PARTITIONS.some((count) => !Number.isInteger(count) || count < 2)) {
  process.stderr.write(`--partitions: whole numbers of 2 or more, comma-separated (e.g. 4,16)\n`);
  process.exit(2);
}
const SAMPLES = Number(values.samples ?? (values.quick === true ? 200 : 400));
const BLOCK = 50;
const CONVERSATIONS = Math.ceil(MESSAGES / SEED_DEPTH / SEED_CHUNK) * SEED_CHUNK;
const log = (text: string) => process.stderr.write(`${text}\n`);
if (!process.env["VERBATIM_PG_URL"]) {
  log("partitions.ts needs VERBATIM_PG_URL (e.g. postgres://postgres@127.0.0.1:5432/test)");
  process.exit(2);
}

interface Store {
  readonly name: string;
  readonly fresh: FreshDatabase;
  readonly gateway: GatewayMessageStore;
  readonly appendTimes: number[];
  readonly readTimes: number[];
}

async function seeded(name: string, partitions: number | undefined): Promise<Store> {
  const fresh = await freshDatabase("postgres");
  if (partitions !== undefined) await partitionBySubject(fresh.database, partitions);
  const started = performance.now();
  for (let first = 0; first < CONVERSATIONS; first += SEED_CHUNK) {
    await seedChunk(fresh.database, first, first + SEED_CHUNK);
    if ((first / SEED_CHUNK) % 10 === 9) {
      log(`${name}: ${((first + SEED_CHUNK) * SEED_DEPTH).toLocaleString("en")} messages`);
    }
  }
  await sql`analyze`.execute(fresh.database.db);
  log(`${name}: seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return {
    name,
    fresh,
    gateway: new GatewayMessageStore(fresh.database),
    appendTimes: [],
    readTimes: [],
  };
}

/** Conversations in a shuffled order (the same for both stores), each used once. */
const order = Array.from({ length: CONVERSATIONS }, (_, index) => index);
for (let index = order.length - 1; index > 0; index--) {
  const other = Math.floor(Math.random() * (index + 1));
  [order[index], order[other]] = [order[other] ?? 0, order[index] ?? 0];
}
const subjectOf = (conversation: number) => `s${conversation % SEED_SUBJECTS}`;
const tipOf = (conversation: number) => `m${conversation}-${SEED_DEPTH - 1}`;

async function block(store: Store, at: number): Promise<void> {
  for (let index = at; index < at + BLOCK; index++) {
    const appended = order[index * 2] ?? 0;
    const read = order[index * 2 + 1] ?? 0;
    let started = performance.now();
    await store.gateway.appendMessages(subjectOf(appended), {
      previousMessageId: tipOf(appended),
      messages: [
        { role: "user", content: [{ type: "text", text: `and then, ${index}?` }] },
        { role: "assistant", content: [{ type: "text", text: "then the tests passed." }] },
      ],
    });
    store.appendTimes.push(performance.now() - started);
    started = performance.now();
    const context = await store.gateway.readContext(subjectOf(read), tipOf(read));
    store.readTimes.push(performance.now() - started);
    if (context.messages.length !== SEED_DEPTH)
      throw new Error(`context of ${tipOf(read)}: ${context.messages.length}`);
  }
}

const p50 = (times: readonly number[]) =>
  [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0;

const plain = await seeded("unpartitioned", undefined);
const splits: Store[] = [];
try {
  for (const count of PARTITIONS) splits.push(await seeded(`${count} partitions`, count));
  const stores = [plain, ...splits];
  // A warm-up block each, not counted.
  for (const store of stores) {
    await block(store, 0);
    store.appendTimes.length = store.readTimes.length = 0;
  }
  for (let at = BLOCK; at < BLOCK + SAMPLES; at += BLOCK) {
    for (const store of stores) await block(store, at);
  }
  const row = (what: string, times: (store: Store) => number[]) => {
    const base = p50(times(plain));
    const cells = splits.map((split) => {
      const value = p50(times(split));
      return `${value.toFixed(2)} ms (${(value / base).toFixed(2)}×)`;
    });
    return `| ${what} | ${base.toFixed(2)} ms | ${cells.join(" | ")} |`;
  };
  process.stdout.write(
    [
      `PostgreSQL, ${(CONVERSATIONS * SEED_DEPTH).toLocaleString("en")} messages of ${SEED_SUBJECTS.toLocaleString("en")} subjects, p50 of ${SAMPLES}; ratio to unpartitioned, goal ≤ 1.1×`,
      "",
      `| operation | unpartitioned | ${PARTITIONS.map((count) => `${count} partitions by subject`).join(" | ")} |`,
      `| --- | ---: | ${PARTITIONS.map(() => "---:").join(" | ")} |`,
      row("append a turn", (store) => store.appendTimes),
      row("read a context (20 messages)", (store) => store.readTimes),
      "",
    ].join("\n"),
  );
} finally {
  await plain.fresh.cleanup();
  for (const split of splits) await split.fresh.cleanup();
}
