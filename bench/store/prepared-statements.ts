// What named prepared statements save on PostgreSQL (src/store/prepared-statements.ts): the two
// writes of every response, each on a database opened with them off (the baseline: the query
// template's SQL sent unnamed, parsed and planned at every run) and on (the default: parsed and
// planned once per connection), after the process sat idle 20 ms as a server does while a model
// thinks, and back to back. The writes: a new conversation's turn appended (a user message and
// an in_progress answer, one statement) and the answer's durable finish (one UPDATE).
// Run: node bin/run-ts.js bench/store/prepared-statements.ts [--pg-url URL]
// PostgreSQL: --pg-url, else VERBATIM_PG_URL, else postgres://postgres@127.0.0.1:5432/test.
import { parseArgs } from "node:util";
import pg from "pg";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({ options: { "pg-url": { type: "string" } } });
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const SAMPLES = 150;
const schema = `verbatim_bench_prepared_${process.pid}`;

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const p50 = (taken: readonly number[]) =>
  [...taken].sort((a, b) => a - b)[Math.floor(taken.length / 2)] ?? Number.NaN;

await admin(`create schema ${schema}`);
const location: DatabaseLocation = { dialect: "postgres", url: pgUrl, schema };
const opened: StoreDatabase[] = [];
try {
  const unnamed = await openDatabase(location, { poolSize: 1, preparedStatements: false });
  opened.push(unnamed);
  await migrateDatabase(unnamed);
  const named = await openDatabase(location, { poolSize: 1 });
  opened.push(named);
  const ways = [
    { name: "unnamed (preparedStatements: false, the baseline)", database: unnamed },
    { name: "named prepared statements (the default)", database: named },
  ].map((way) => ({ ...way, store: new GatewayMessageStore(way.database) }));
  // Each way warms up (its JIT, and its connection's statements) before it is timed.
  for (const way of ways) {
    for (let index = 0; index < 50; index++) {
      const [, answer] = await way.store.appendMessages("bench", {
        previousMessageId: null,
        messages: [
          { role: "user", content: [{ type: "text", text: "What is the answer?" }] },
          { role: "assistant", content: [], status: "in_progress" },
        ],
      });
      await way.store.finishMessage("bench", answer?.id ?? "", {
        status: "completed",
        content: [{ type: "text", text: "Forty-two." }],
      });
    }
  }
  const lines: string[] = [];
  for (const idleMs of [20, 0]) {
    const appendTimes: number[][] = ways.map(() => []);
    const finishTimes: number[][] = ways.map(() => []);
    // The ways take turns, sample by sample, so a checkpoint or a busy moment hits both alike.
    for (let index = 0; index < SAMPLES; index++) {
      for (const [position, way] of ways.entries()) {
        if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
        let started = performance.now();
        const [, answer] = await way.store.appendMessages("bench", {
          previousMessageId: null,
          messages: [
            { role: "user", content: [{ type: "text", text: "What is the answer?" }] },
            { role: "assistant", content: [], status: "in_progress" },
          ],
        });
        appendTimes[position]?.push(performance.now() - started);
        if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
        started = performance.now();
        await way.store.finishMessage("bench", answer?.id ?? "", {
          status: "completed",
          content: [{ type: "text", text: "The answer is forty-two." }],
        });
        finishTimes[position]?.push(performance.now() - started);
      }
    }
    const when = idleMs === 0 ? "back to back" : `after ${idleMs} ms idle`;
    for (const [what, times] of [
      ["append a turn (2 messages)", appendTimes],
      ["finish the answer", finishTimes],
    ] as const) {
      const baseline = p50(times[0] ?? []);
      for (const [position, way] of ways.entries()) {
        const taken = p50(times[position] ?? []);
        lines.push(
          `| ${when} | ${what} | ${way.name} | ${taken.toFixed(3)} ms | ${(taken / baseline).toFixed(2)}× |`,
        );
      }
    }
  }
  process.stdout.write(
    `durable writes of a response on PostgreSQL, p50 of ${SAMPLES}, one connection each\n\n` +
      "| when | write | statements | p50 | vs unnamed |\n| --- | --- | --- | ---: | ---: |\n" +
      `${lines.join("\n")}\n`,
  );
} finally {
  for (const database of opened) await database.close();
  await admin(`drop schema ${schema} cascade`);
}
