// One large recorded call against everyone else (issue 31, item 5): subject A sends one
// POST /v1/messages whose body holds 195,000 tiny messages (8.2 MB, under the 8 MiB body
// limit), while subject B sends a small POST /v1/messages every 10 ms. Printed per database:
// the event loop's delay while A's call is answered and placed in its chain (perf_hooks'
// monitorEventLoopDelay: p50, p99, max), B's latency meanwhile beside B alone before it, and how
// long the placing of A's call took. The upstream answers every call with the same small JSON
// without parsing the body (test/support/fixed-answer-upstream.ts), and A's request is sent
// from a thread of its own, so the server's work is what loads the event loop.
// Run: node bin/run-ts.js bench/server/recorded-big-call.ts [--messages 195000]
//      [--dialects sqlite,postgres] [--pg-url URL]
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { buildServer } from "../../packages/server/src/server/app.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { startFixedAnswerUpstream } from "../../test/support/fixed-answer-upstream.js";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "195000" },
    dialects: { type: "string", default: "sqlite,postgres" },
    "pg-url": { type: "string" },
  },
});
const MESSAGES = Number(values.messages);
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

const percentile = (list: readonly number[], p: number): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
};

/** The big body: alternating user and assistant messages of a few characters each. */
function bigBody(count: number): string {
  const messages = Array.from({ length: count }, (_, index) => ({
    role: index % 2 === 0 ? "user" : "assistant",
    content: `msg ${index}`,
  }));
  return JSON.stringify({ model: "claude-test", max_tokens: 16, messages });
}

async function open(dialect: string): Promise<{ database: StoreDatabase; done(): Promise<void> }> {
  if (dialect === "sqlite") {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-big-call-"));
    const database = await openDatabase(
      { dialect: "sqlite", path: join(folder, "bench.sqlite") },
      // As `verbatim serve` opens it.
      { checkpointThread: true },
    );
    await migrateDatabase(database);
    return {
      database,
      async done() {
        await database.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  const schema = `verbatim_bench_big_${randomBytes(4).toString("hex")}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(text);
    await client.end();
  };
  await admin(`create schema ${schema}`);
  const database = await openDatabase({ dialect: "postgres", url: pgUrl, schema });
  await migrateDatabase(database);
  return {
    database,
    async done() {
      await database.close();
      await admin(`drop schema ${schema} cascade`);
    },
  };
}

/** Sends the body from a thread of its own; posts the time its answer took. */
const bigClient = `
const { parentPort, workerData } = require("node:worker_threads");
const { request } = require("node:http");
const started = performance.now();
const call = request({ host: "127.0.0.1", port: workerData.port, path: "/v1/messages",
  method: "POST", headers: { "content-type": "application/json",
  "x-api-key": workerData.key, "anthropic-version": "2023-06-01" } }, (response) => {
  response.on("data", () => undefined);
  response.on("end", () => parentPort.postMessage({ status: response.statusCode,
    ms: performance.now() - started }));
});
call.end(workerData.body);`;

async function run(dialect: string, body: string): Promise<string> {
  const { database, done } = await open(dialect);
  const upstream = await startFixedAnswerUpstream();
  const app = await buildServer({
    database,
    operatorToken: "vop_bench-big-call",
    rateLimit: false,
    webRoot: false,
    upstream: upstreamConfigFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-upstream",
      ANTHROPIC_BASE_URL: upstream.url,
    }),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const keyA = (await createApiKey(database, "subject-a")).key;
  const keyB = (await createApiKey(database, "subject-b")).key;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const small = JSON.stringify({
    model: "claude-test",
    max_tokens: 16,
    messages: [{ role: "user", content: "ping" }],
  });
  const postSmall = (): Promise<number> => {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const call = request(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/messages",
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "x-api-key": keyB },
        },
        (response) => {
          response.on("data", () => undefined);
          response.on("end", () => resolve(performance.now() - started));
        },
      );
      call.on("error", reject);
      call.end(small);
    });
  };
  /** B's calls, one every 10 ms, until `until` says stop. */
  const probe = async (until: () => boolean): Promise<number[]> => {
    const latencies: number[] = [];
    while (!until()) {
      latencies.push(await postSmall());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return latencies;
  };
  const placedA = async (): Promise<boolean> => {
    const row = await database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select("conversation_id")
      .where("subject_uid", "=", "subject-a")
      .executeTakeFirst();
    return row !== undefined && row.conversation_id !== "";
  };
  // B alone first (the baseline of the same run).
  const baselineEnd = performance.now() + 1000;
  const baseline = await probe(() => performance.now() > baselineEnd);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  const client = new Worker(bigClient, { eval: true, workerData: { port, key: keyA, body } });
  let answer: { status: number; ms: number } | undefined;
  client.once("message", (message: { status: number; ms: number }) => (answer = message));
  let placedAt: number | undefined;
  const watching = (async () => {
    while (placedAt === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (answer !== undefined && (await placedA())) placedAt = performance.now();
    }
  })();
  const during = await probe(() => placedAt !== undefined);
  await watching;
  histogram.disable();
  await client.terminate();
  const messages = await database.db
    .selectFrom("ai_gateway_messages")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("subject_uid", "=", "subject-a")
    .executeTakeFirstOrThrow();
  agent.destroy();
  await app.close();
  await upstream.close();
  await done();
  const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(1);
  return [
    dialect,
    `${answer?.status} in ${answer?.ms.toFixed(0)} ms`,
    (((placedAt ?? started) - started) / 1000).toFixed(1),
    String(Number(messages.count)),
    ms(histogram.percentile(50)),
    ms(histogram.percentile(99)),
    ms(histogram.max),
    `${percentile(baseline, 0.5).toFixed(1)} / ${Math.max(...baseline).toFixed(1)}`,
    `${percentile(during, 0.5).toFixed(1)} / ${percentile(during, 0.99).toFixed(1)} / ${Math.max(...during).toFixed(1)}`,
    String(during.length),
  ].join(" | ");
}

const body = bigBody(MESSAGES);
process.stderr.write(
  `[recorded-big-call] ${MESSAGES} messages, ${(Buffer.byteLength(body) / 1e6).toFixed(2)} MB\n`,
);
const rows: string[] = [];
for (const dialect of values.dialects.split(",")) rows.push(await run(dialect, body));
console.log(
  "| database | A's answer | A placed after, s | A's gateway messages | event-loop delay p50 ms | p99 ms | max ms | B alone p50 / max ms | B meanwhile p50 / p99 / max ms | B's calls |",
);
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |");
for (const row of rows) console.log(`| ${row} |`);
