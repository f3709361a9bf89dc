// How long the server's event loop stalls while it builds the largest console page (issue 20:
// the goal is at most 20 ms): GET /healthz is asked every 5 ms on one connection while another
// asks, again and again, for the largest page of a conversation whose 1,000 messages hold
// 8 KiB of text each (a 1,000-message page of ~8 MiB, cut to the default 1 MiB limit), in
// each view. Printed: /healthz latency (p50, p99, max) while the pages are built, beside the
// same latency with no page being built (the baseline of the same run), and the event loop's
// own longest delay (perf_hooks' monitorEventLoopDelay), and the longest block in CPU time:
// the event loop's thread CPU time between two turns of a 1 ms timer, which a loaded machine
// does not inflate (wall-clock stalls there include the time the process waits for a core).
// The messages are written beside the server (not through it), so the server's message cache
// starts cold: the first pages read ~8 MiB of messages into it, and the garbage collector's
// scavenges then copy them to the old generation once. Those first pages (the three views in
// turn, for up to 3 s) get their own row; the rows per view follow, the cache warm.
// The pages are built in the console's worker thread (the server's default on a SQLite file);
// `--in-thread` builds them on the event loop, in slices, as before it (to compare).
// The client that asks for the pages runs in a thread of its own, so that only the server's
// work counts on the event loop's thread (before 2026-12-02 it ran on it).
// Run: node bin/run-ts.js bench/server/console-event-loop.ts [--seconds 5] [--in-thread]
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { buildServer } from "../../packages/server/src/server/app.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    "in-thread": { type: "boolean", default: false },
  },
});
const SECONDS = Number(values.seconds);
const TOKEN = "vop_bench-event-loop";

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-loop-"));
const database = await openDatabase({ dialect: "sqlite", path: join(folder, "bench.sqlite") });
await migrateDatabase(database);
const store = new GatewayMessageStore(database);
let previous: string | null = null;
let conversationId = "";
const text = "An ordinary sentence of a long tool result, repeated. ".repeat(150);
for (let start = 0; start < 1000; start += 200) {
  const written = await store.appendMessages("bench-subject", {
    previousMessageId: previous,
    messages: Array.from({ length: 200 }, (_, offset) => ({
      role: (start + offset) % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: [{ type: "text" as const, text: `${start + offset}: ${text}` }],
    })),
  });
  previous = written[written.length - 1]?.id ?? previous;
  conversationId = written[0]?.conversationId ?? conversationId;
}
const app = await buildServer({
  database,
  operatorToken: TOKEN,
  rateLimit: false,
  webRoot: false,
  ...(values["in-thread"] ? { consoleWorker: false as const } : {}),
});
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
const port = typeof address === "object" && address !== null ? address.port : 0;

function get(path: string, agent: Agent): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const call = request(
      { host: "127.0.0.1", port, path, agent, headers: { authorization: `Bearer ${TOKEN}` } },
      (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => (bytes += chunk.length));
        response.on("end", () => resolve({ ms: performance.now() - started, bytes }));
      },
    );
    call.on("error", reject);
    call.end();
  });
}

const percentile = (list: number[], p: number) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
};

/** /healthz every 5 ms for the given time; returns its latencies. */
async function probe(seconds: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    latencies.push((await get("/healthz", agent)).ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  agent.destroy();
  return latencies;
}

/** The most CPU time the event loop's thread spent between two turns of a 1 ms timer. */
let longestBlockCpu = 0;
// process.threadCpuUsage: Node 23.9 and later (the types installed do not have it yet).
const threadCpuUsage = () =>
  (process as NodeJS.Process & { threadCpuUsage(): NodeJS.CpuUsage }).threadCpuUsage();
let lastCpu = threadCpuUsage();
setInterval(() => {
  const now = threadCpuUsage();
  const spent = (now.user - lastCpu.user + now.system - lastCpu.system) / 1000;
  longestBlockCpu = Math.max(longestBlockCpu, spent);
  lastCpu = now;
}, 1).unref();

const histogram = monitorEventLoopDelay({ resolution: 1 });
longestBlockCpu = 0;
const baseline = await probe(Math.min(2, SECONDS));
const report: string[] = [];
report.push(
  `| /healthz alone: baseline | ${percentile(baseline, 0.5).toFixed(1)} | ${percentile(baseline, 0.99).toFixed(1)} | ${Math.max(...baseline).toFixed(1)} | | ${longestBlockCpu.toFixed(1)} | |`,
);
/**
 * The client that asks for the pages runs in a thread of its own: in the server's thread, its
 * reading of each 1 MiB reply counted as the server's event loop time (a browser asks for the
 * pages from elsewhere). It asks for the given views' pages in turn until told to stop, then
 * posts the page times and the last page's size.
 */
const pageClient = `
const { parentPort, workerData } = require("node:worker_threads");
const { Agent, request } = require("node:http");
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
let building = false;
function get(path) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const call = request({ host: "127.0.0.1", port: workerData.port, path, agent,
      headers: { authorization: "Bearer " + workerData.token } }, (response) => {
      let bytes = 0;
      response.on("data", (chunk) => (bytes += chunk.length));
      response.on("end", () => resolve({ ms: performance.now() - started, bytes }));
    });
    call.on("error", reject);
    call.end();
  });
}
parentPort.on("message", async (message) => {
  if (message.stop) { building = false; return; }
  building = true;
  const pages = [];
  let bytes = 0;
  for (let turn = 0; building; turn++) {
    const view = message.views[turn % message.views.length];
    const page = await get("/ai-gateway/conversations/" + workerData.conversationId +
      "/messages?view=" + view + "&limit=1000");
    pages.push(page.ms);
    bytes = page.bytes;
  }
  parentPort.postMessage({ pages, bytes });
});`;
const client = new Worker(pageClient, {
  eval: true,
  workerData: { port, token: TOKEN, conversationId },
});

/** /healthz probed while the given views' pages are asked for in turn, again and again. */
async function whileBuilding(label: string, views: readonly string[], seconds: number) {
  const done = new Promise<{ pages: number[]; bytes: number }>((resolve) =>
    client.once("message", resolve),
  );
  client.postMessage({ views });
  histogram.reset();
  histogram.enable();
  longestBlockCpu = 0;
  const latencies = await probe(seconds);
  histogram.disable();
  client.postMessage({ stop: true });
  const { pages, bytes } = await done;
  report.push(
    `| /healthz while ${label} pages of 1,000 messages are built (${(bytes / 1048576).toFixed(2)} MiB, ${percentile(pages, 0.5).toFixed(0)} ms each) | ${percentile(latencies, 0.5).toFixed(1)} | ${percentile(latencies, 0.99).toFixed(1)} | ${Math.max(...latencies).toFixed(1)} | ${(histogram.max / 1e6).toFixed(1)} | ${longestBlockCpu.toFixed(1)} | ${(percentile(latencies, 0.99) / percentile(baseline, 0.99)).toFixed(1)}× |`,
  );
}
const views = ["stored", "chatml", "model-visible"] as const;
await whileBuilding("the first (message cache cold)", views, Math.min(3, SECONDS));
for (const view of views) await whileBuilding(view, [view], SECONDS);
console.log(
  "| what | p50 ms | p99 ms | max ms | longest event-loop delay ms | longest block, CPU ms | p99 ratio |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const line of report) console.log(line);
console.log(`pages built in: ${app.consolePages.builtIn}`);
await client.terminate();
await app.close();
await database.close();
rmSync(folder, { recursive: true, force: true });
