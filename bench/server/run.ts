// The HTTP server under load (docs/server/performance.md): requests/s, p50 and p99 of the console routes
// and of POST /v1/responses against a local upstream, on SQLite and on PostgreSQL, beside the
// upstream measured alone in the same run (the server's overhead = its p50 − the upstream's)
// and a bare pass-through proxy on it (bare-proxy.ts: the floor of any server in between), the
// three taking turns in blocks of requests; the upstream's think time is exact (upstream.ts);
// then, on PostgreSQL, how soon a revoked API key is refused (revocation.ts).
// Run: node bin/run-ts.js bench/server/run.ts [--pg-url URL] [--no-pg] [--quick] [--overhead-only]
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: {
    "pg-url": { type: "string" },
    "no-pg": { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
    "overhead-only": { type: "boolean", default: false },
  },
});
/** Only the sequential overhead measurement, without the autocannon rows. */
const overheadOnly = values["overhead-only"] === true;
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const DURATION = values.quick === true ? 3 : 8;
const CONNECTIONS = 4;
const root = new URL("../../", import.meta.url).pathname;

function child(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ process: ChildProcess; firstLine: string; out: () => string }> {
  const process_ = spawn(globalThis.process.execPath, args, {
    cwd: root,
    env: { ...globalThis.process.env, VERBATIM_LOG_LEVEL: "error", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    process_.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split("\n");
      if (args.includes("serve") ? lines.length > 5 : lines.length > 1) {
        resolve({ process: process_, firstLine: lines[0] ?? "", out: () => out });
      }
    });
    process_.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${out}`)));
  });
}

async function stop(process_: ChildProcess): Promise<void> {
  if (process_.exitCode !== null || process_.signalCode !== null) {
    throw new Error(`a child process ended early (${process_.exitCode ?? process_.signalCode})`);
  }
  process_.removeAllListeners("exit");
  const exited = new Promise((resolve) => process_.once("exit", resolve));
  process_.kill("SIGTERM");
  await exited;
}

interface Row {
  readonly database: string;
  readonly what: string;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

async function load(
  url: string,
  options: {
    method?: "GET" | "POST";
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
  },
): Promise<{ requestsPerSecond: number; p50: number; p99: number; errors: number }> {
  const result = await autocannon({
    url,
    connections: options.connections ?? CONNECTIONS,
    duration: DURATION,
    method: options.method ?? "GET",
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** A route the overhead measurement times. */
interface Timed {
  readonly url: string;
  readonly method?: "GET" | "POST";
  readonly headers?: Record<string, string>;
  /** The body of each request, given this route's previous response body ("" at first). */
  readonly body?: (previous: string) => string;
}

/**
 * One request after another on one kept-alive connection per route, each timed to the last
 * byte of its response with a sub-millisecond clock (autocannon rounds latencies to whole
 * milliseconds): the p50 the "server adds" goal is read from. The routes take turns in blocks
 * of `block` requests until each has `count`, so a slow stretch of the machine (another
 * process, a checkpoint) falls on all of them alike instead of on the one measured then.
 */
async function interleaved(
  routes: readonly Timed[],
  count: number,
  block: number,
): Promise<{ p50: number; p90: number }[]> {
  const previous = routes.map(() => "");
  const once = (index: number) =>
    new Promise<number>((resolve, reject) => {
      const route = routes[index] as Timed;
      const body = route.body?.(previous[index] ?? "");
      const started = performance.now();
      const request = httpRequest(
        route.url,
        { method: route.method ?? "GET", headers: route.headers ?? {}, agent: keepAlive },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            const elapsed = performance.now() - started;
            const text = Buffer.concat(chunks).toString("utf8");
            previous[index] = text;
            if ((response.statusCode ?? 500) >= 300) {
              reject(new Error(`${route.url} answered ${response.statusCode}: ${text}`));
            } else resolve(elapsed);
          });
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  for (let index = 0; index < routes.length; index++) {
    for (let warm = 0; warm < Math.min(100, count); warm++) await once(index);
  }
  const samples = routes.map((): number[] => []);
  while ((samples[0]?.length ?? count) < count) {
    for (let index = 0; index < routes.length; index++) {
      const own = samples[index] as number[];
      for (let n = 0; n < block && own.length < count; n++) own.push(await once(index));
    }
  }
  return samples.map((own) => {
    own.sort((a, b) => a - b);
    return {
      p50: own[Math.floor(own.length / 2)] ?? Number.NaN,
      p90: own[Math.floor(own.length * 0.9)] ?? Number.NaN,
    };
  });
}

/** Seeds a migrated database: an API key, a 40-message conversation with tool calls, a job. */
async function seed(location: DatabaseLocation) {
  const database = await openDatabase(location);
  try {
    await migrateDatabase(database);
    const subject = "bench-subject";
    const { key } = await createApiKey(database, subject);
    const store = new GatewayMessageStore(database);
    let previous: string | null = null;
    let conversationId = "";
    for (let turn = 0; turn < 10; turn++) {
      const messages = await store.appendMessages(subject, {
        previousMessageId: previous,
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: `Question ${turn}: ${"context ".repeat(40)}` }],
          },
          {
            role: "assistant",
            content: [
              {
                type: "toolCall",
                id: `toolu_${turn}`,
                name: "search",
                arguments: `{"q":"${turn}"}`,
              },
            ],
          },
          {
            role: "tool",
            content: [
              {
                type: "toolResult",
                callID: `toolu_${turn}`,
                toolName: "search",
                isError: false,
                content: "result ".repeat(60),
              },
            ],
          },
          {
            role: "assistant",
            content: [{ type: "text", text: `Answer ${turn}. ${"detail ".repeat(50)}` }],
          },
        ],
      });
      previous = messages[messages.length - 1]?.id ?? null;
      conversationId = messages[0]?.conversationId ?? conversationId;
    }
    const jobs = new BackgroundAgentJobs(database);
    const job = await jobs.createJob(subject, { conversationId, retryBudget: 0 });
    await jobs.startAttempt(subject, job.id);
    for (let turn = 0; turn < 3; turn++) {
      const started = await jobs.startTurn(subject, job.id, [
        { item_key: `client:${turn}`, item: { type: "user_message", text: `Step ${turn}` } },
      ]);
      await jobs.appendItems(
        subject,
        started.turn.id,
        Array.from({ length: 10 }, (_, index) => ({
          item_key: `agent:${turn}:${index}`,
          item: {
            type: "agent_message",
            text: `Working on step ${turn}, part ${index}. ${"note ".repeat(30)}`,
          },
        })),
      );
    }
    // Baseline: one durable commit (a one-message append), the unit a response pays twice.
    const commits: number[] = [];
    for (let index = 0; index < 60; index++) {
      const started = performance.now();
      await store.appendMessages(subject, {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "baseline" }] }],
      });
      commits.push(performance.now() - started);
    }
    commits.sort((a, b) => a - b);
    const commitP50 = commits[Math.floor(commits.length / 2)] ?? 0;
    return { key, conversationId, jobId: job.id, commitP50 };
  } finally {
    await database.close();
  }
}

/** The server's env against one upstream. */
const serverEnv = (upstreamUrl: string) => ({
  VERBATIM_OPERATOR_TOKEN: "vop_bench",
  VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
  ANTHROPIC_API_KEY: "sk-ant-bench",
  ANTHROPIC_BASE_URL: upstreamUrl,
  VERBATIM_LOG_LEVEL: process.env["VERBATIM_LOG_LEVEL"] ?? "error",
});

/**
 * The server's overhead at p50: an upstream (answering after `thinkMs`) measured alone, then a
 * server on it, each with SEQUENTIAL requests one after another. Two kinds of request: a new
 * conversation (2 messages stored), and a continuation of the previous response (its context
 * read, rendered and sent; a new conversation every 10 requests, so contexts stay ≤ 20 deep).
 */
async function measureOverhead(
  database: string,
  databaseText: string,
  key: string,
  thinkMs: number,
): Promise<string[]> {
  const upstream_ = await child([
    "bin/run-ts.js",
    "bench/server/upstream.ts",
    "--delay-ms",
    String(thinkMs),
  ]);
  const upstreamUrl_ = upstream_.firstLine.trim();
  const bare = await child(["bin/run-ts.js", "bench/server/bare-proxy.ts", upstreamUrl_]);
  const bareUrl = bare.firstLine.trim();
  const server = await child(
    ["bin/verbatim.js", "serve", "--db", databaseText, "--port", "0"],
    serverEnv(upstreamUrl_),
  );
  const url = /listening on (\S+)/.exec(server.firstLine)?.[1] ?? "";
  const label = thinkMs === 0 ? "instant upstream" : `upstream thinks ${thinkMs} ms`;
  try {
    log(`${database}: overhead, ${label}`);
    // With think time each request lasts ~20 ms: fewer of them keep the run short.
    const count = thinkMs === 0 ? SEQUENTIAL : Math.ceil(SEQUENTIAL / 3);
    const caller = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    /** Request bodies of one route: a new conversation each time, or continuing (10 deep). */
    const bodies = (chained: boolean) => {
      let sent = 0;
      return (previous: string) => {
        sent++;
        const previousId =
          chained && previous !== "" && sent % 10 !== 0
            ? (JSON.parse(previous) as { id: string }).id
            : undefined;
        return JSON.stringify({
          model: "claude-bench",
          input: "What is the answer?",
          ...(previousId === undefined ? {} : { previous_response_id: previousId }),
        });
      };
    };
    const json = { "content-type": "application/json" };
    const [alone, viaBareProxy, ...measured] = await interleaved(
      [
        {
          url: `${upstreamUrl_}/v1/messages`,
          method: "POST",
          headers: { ...json, "x-api-key": "sk-ant-bench" },
          body: () => upstreamBody,
        },
        // The floor: a pass-through proxy that stores and checks nothing, in the same run.
        { url: bareUrl, method: "POST", headers: json, body: () => upstreamBody },
        {
          url: `${url}/v1/responses`,
          method: "POST",
          headers: caller,
          body: bodies(false),
        },
        {
          url: `${url}/v1/responses`,
          method: "POST",
          headers: caller,
          body: bodies(true),
        },
      ],
      count,
      thinkMs === 0 ? 50 : 10,
    );
    if (alone === undefined || viaBareProxy === undefined) throw new Error("no baseline");
    const lines: string[] = [];
    for (const [index, what] of [
      "new conversation",
      "continuing the previous response",
    ].entries()) {
      const server = measured[index];
      if (server === undefined) throw new Error(`no figures for ${what}`);
      const over = server.p50 - alone.p50;
      lines.push(
        `| ${database} | ${label} | ${what} | ${alone.p50.toFixed(2)} | ` +
          `${viaBareProxy.p50.toFixed(2)} (+${(viaBareProxy.p50 - alone.p50).toFixed(2)}) | ` +
          `${server.p50.toFixed(2)} | ${server.p90.toFixed(2)} | +${over.toFixed(2)} ms | ` +
          `+${(server.p50 - viaBareProxy.p50).toFixed(2)} ms | ${over < 2 ? "met" : "NOT met"} |`,
      );
    }
    return lines;
  } finally {
    await stop(server.process);
    await stop(bare.process);
    await stop(upstream_.process);
  }
}

const rows: Row[] = [];
const commitBaselines: string[] = [];
const log = (text: string) => process.stderr.write(`[bench/server] ${text}\n`);
const upstream = await child(["bin/run-ts.js", "bench/server/upstream.ts"]);
const upstreamUrl = upstream.firstLine.trim();
log(`upstream at ${upstreamUrl}`);
const upstreamBody = JSON.stringify({
  model: "claude-bench",
  max_tokens: 4096,
  stream: true,
  messages: [{ role: "user", content: [{ type: "text", text: "What is the answer?" }] }],
});
const skipped = { requestsPerSecond: 0, p50: 0, p99: 0, errors: 0 };
const loadUpstream = (connections: number) =>
  overheadOnly
    ? Promise.resolve(skipped)
    : load(`${upstreamUrl}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-bench" },
        body: upstreamBody,
        connections,
      });
const alone = await loadUpstream(CONNECTIONS);
rows.push({ database: "-", what: "upstream alone: POST /v1/messages (stream)", ...alone });
const aloneSingle = await loadUpstream(1);
rows.push({ database: "-", what: "upstream alone, 1 connection", ...aloneSingle });
const SEQUENTIAL = values.quick === true ? 300 : 1500;
/** Upstream think times of the overhead measurement: none, and a stand-in for a model's. */
const THINK_MS = [0, 20];
const overheads: string[] = [];

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-server-"));
const targets: {
  name: string;
  location: DatabaseLocation;
  text: string;
  cleanup: () => Promise<void>;
}[] = [
  {
    name: "SQLite",
    location: { dialect: "sqlite", path: join(folder, "bench.sqlite") },
    text: join(folder, "bench.sqlite"),
    cleanup: async () => undefined,
  },
];
if (values["no-pg"] !== true) {
  const schema = `verbatim_bench_server_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const separator = pgUrl.includes("?") ? "&" : "?";
  targets.push({
    name: "PostgreSQL",
    location: { dialect: "postgres", url: pgUrl, schema },
    text: `${pgUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    cleanup: async () => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  });
}

try {
  for (const target of targets) {
    log(`${target.name}: seeding`);
    const seeded = await seed(target.location);
    for (const thinkMs of THINK_MS) {
      overheads.push(...(await measureOverhead(target.name, target.text, seeded.key, thinkMs)));
    }
    log(`${target.name}: starting the server`);
    const server = await child(
      ["bin/verbatim.js", "serve", "--db", target.text, "--port", "0"],
      serverEnv(upstreamUrl),
    );
    const url = /listening on (\S+)/.exec(server.firstLine)?.[1] ?? "";
    const operator = { authorization: "Bearer vop_bench" };
    const caller = { authorization: `Bearer ${seeded.key}`, "content-type": "application/json" };
    const runs: [string, string, Parameters<typeof load>[1]][] = [
      ["GET /healthz", `${url}/healthz`, {}],
      [
        "GET /ai-gateway/conversations/:id/messages (stored, 40 messages)",
        `${url}/ai-gateway/conversations/${seeded.conversationId}/messages`,
        { headers: operator },
      ],
      [
        "GET /ai-gateway/conversations/:id/messages (model-visible)",
        `${url}/ai-gateway/conversations/${seeded.conversationId}/messages?view=model-visible`,
        { headers: operator },
      ],
      [
        "GET /background-agent-jobs/:id (chatml, 3 turns, 33 items)",
        `${url}/background-agent-jobs/${seeded.jobId}?view=chatml`,
        { headers: operator },
      ],
      [
        "POST /v1/responses, 1 connection",
        `${url}/v1/responses`,
        {
          method: "POST",
          headers: caller,
          body: JSON.stringify({ model: "claude-bench", input: "What is the answer?" }),
          connections: 1,
        },
      ],
      [
        "POST /v1/responses (new conversation, 2 messages stored)",
        `${url}/v1/responses`,
        {
          method: "POST",
          headers: caller,
          body: JSON.stringify({ model: "claude-bench", input: "What is the answer?" }),
        },
      ],
    ];
    commitBaselines.push(`${target.name}: ${seeded.commitP50.toFixed(2)} ms`);
    for (const [what, target_, options] of overheadOnly ? [] : runs) {
      log(`${target.name}: ${what}`);
      rows.push({ database: target.name, what, ...(await load(target_, options)) });
    }
    log(`${target.name}: stopping the server`);
    await stop(server.process);
  }
} finally {
  log("stopping the upstream");
  await stop(upstream.process);
  for (const target of targets) await target.cleanup();
  rmSync(folder, { recursive: true, force: true });
}

const upstreamP50 = alone.p50;
const aloneOne =
  rows.find((row) => row.what.startsWith("upstream alone, 1 connection"))?.p50 ?? upstreamP50;
process.stdout.write(
  `\n${cpus().length} cores, load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(" ")}; autocannon, ${CONNECTIONS} connections, ${DURATION} s per row\n\n`,
);
process.stdout.write(
  `one durable commit (a one-message append, p50; a response pays two): ${commitBaselines.join(", ")}\n\n`,
);
process.stdout.write(
  `\nThe server's overhead at p50 (goal: under 2 ms over the upstream): ${SEQUENTIAL} requests ` +
    `(${Math.ceil(SEQUENTIAL / 3)} with think time) per route, ` +
    "one after another on one kept-alive connection, timed to the last byte, the routes " +
    "taking turns in blocks (50 requests, 10 with think time): the upstream alone, a bare " +
    "pass-through proxy on it (the floor of any server in between: no parsing, storage or " +
    "checks), and the server on it\n\n" +
    "| database | upstream | POST /v1/responses | upstream alone p50 ms | bare proxy p50 ms | server p50 ms | server p90 ms | over the upstream | over the bare proxy | goal |\n" +
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n" +
    `${overheads.join("\n")}\n\nUnder load (autocannon, whole milliseconds):\n\n`,
);
process.stdout.write(
  "| database | route | req/s | p50 ms | p99 ms | errors | p50 over the upstream alone |\n",
);
process.stdout.write("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
for (const row of rows) {
  const base = row.what.includes("1 connection") ? aloneOne : upstreamP50;
  const over = row.what.startsWith("POST /v1/responses")
    ? `+${(row.p50 - base).toFixed(1)} ms`
    : "";
  process.stdout.write(
    `| ${row.database} | ${row.what} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50} | ${row.p99} | ${row.errors} | ${over} |\n`,
  );
}

if (values["no-pg"] !== true) {
  // PostgreSQL servers keep valid API keys: how soon a revocation is heard.
  process.stdout.write("\nAPI key revocation on PostgreSQL (bench/server/revocation.ts):\n");
  const revocation = spawnSync(
    process.execPath,
    ["bin/run-ts.js", "bench/server/revocation.ts", "--pg-url", pgUrl],
    { cwd: root, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (revocation.status !== 0) process.exitCode = 1;
}
