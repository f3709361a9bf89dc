// What recording a Claude Code session costs the store (issue 33's storage goals), measured
// through public behaviour only: HTTP to a `verbatim serve` child process and the database's
// sizes, so it measures whatever storage the server has.
// 1. Store growth: a Claude-Code-shaped session (claude-session.ts: ~43 KB of system prompt and
//    tools with every call, history growing ~4 KB a call with tool results of 500 B – 6 KB,
//    the cache marker moving to the newest block, the same ~60 KB screenshot in calls 5, 30,
//    60, …) sent as POST /v1/messages (stream: true, pass-through, recorded) to the server in
//    front of a local stub upstream streaming Anthropic's server-sent events. At 10, 100 and
//    500 calls (--quick: 10 and 100), once every call is placed (the conversation's cache
//    report lists them all): how much the store grew (SQLite: page_count × page_size, per
//    table from dbstat; after the run also file + WAL after wal_checkpoint(TRUNCATE);
//    PostgreSQL, a fresh database per run: pg_total_relation_size of each table), grouped
//    as recorded bytes (ai_gateway_recorded*, ai_gateway_body*), search index, messages
//    (messages, conversations, branches, chain nodes, images) and other (the rest, SQLite's
//    free pages too). Beside it the session's distinct content (the system prompt, tools and
//    request envelope once, each message's JSON once as first sent, without the image bytes in
//    it, each image's base64 once, each response body once) and the naive figure (every
//    request and response body whole, what a store of whole bodies holds). Goals: growth ≤ 4×
//    distinct, recorded ≤ 1× (≤ 0.4× compressed), growth per call flat (last 10 % of the calls
//    over the first 10 %: ≤ 1.5×).
// 2. Reading a call back: GET /ai-gateway/recorded-calls/:id/request of the session's last call
//    (and, in a full run, of call 100, ~440 KB), 50 reads after 5 unmeasured: p50, p99, goal
//    p50 < 5 ms for a ~400 KB body; the bytes (and the response's) must equal what was sent.
// Runs with the server's defaults (VERBATIM_RECORD_COMPRESSION unset); when the server's
// sources name VERBATIM_RECORD_COMPRESSION, once more with VERBATIM_RECORD_COMPRESSION=none.
// The server packs an idle subject's small pieces (VERBATIM_RECORD_PACK_AFTER_MS, 30 s by
// default): the bench sets it to PACK_AFTER_MS and, at each checkpoint, waits until the store
// has stopped changing, so the figures are those a session has once it has been idle that long.
// Then, per database, with the server's defaults (recording-overhead.ts):
// 3. Recording overhead: POST /v1/messages p50 through the server over a bare pass-through proxy,
//    request bodies of ~4 KB and ~400 KB from growing sessions; goal < 1 ms beyond the call's
//    commit (its pieces and row, written as the server writes them).
// 4. CPU per recorded call at ~400 KB: the server process's against the bare proxy's; ≤ 2×.
// 5. Reading call 500's request back (~400 KB there): p50 < 5 ms, byte-exact.
// `node bin/run-ts.js bench/server/recording-storage.ts [--quick] [--sqlite-only]
//  [--pg-url URL] [--calls 10,100,500] [--overhead-only | --no-overhead] [--pause-ms N]`
//  (progress on stderr, tables on stdout; --overhead-only: 3 – 5 alone, --no-overhead: 1 – 2
//  alone; --pause-ms: the client's pause after each answer in 3, default 0).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import {
  ClaudeSession,
  readAnswerStream,
  startClaudeUpstream,
  withCacheMarker,
} from "./claude-session.js";
import {
  closeOverheadAgent,
  measureOverhead,
  overheadReport,
  type OverheadResult,
} from "./recording-overhead.js";
import { httpCall, operatorJson as operatorJsonOf, type Answer } from "./bench-http.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    "sqlite-only": { type: "boolean", default: false },
    "pg-url": { type: "string" },
    calls: { type: "string" },
    seed: { type: "string", default: "33" },
    "overhead-only": { type: "boolean", default: false },
    "no-overhead": { type: "boolean", default: false },
    "pause-ms": { type: "string", default: "0" },
  },
});
const quick = values.quick === true;
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const CALL_COUNTS = (values.calls ?? (quick ? "10,100" : "10,100,500"))
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const LAST = CALL_COUNTS.at(-1) ?? 10;
/** The calls after which the store is measured: 0, and the ends of each count's first and last 10 %. */
const tenth = (count: number) => Math.max(1, Math.round(count / 10));
const CHECKPOINTS = new Set<number>([0]);
for (const count of CALL_COUNTS) {
  CHECKPOINTS.add(tenth(count));
  CHECKPOINTS.add(count - tenth(count));
  CHECKPOINTS.add(count);
}
const READS = 50;
/** The server's idle time before packing (the bench's; the default is 30 s). */
const PACK_AFTER_MS = 500;
const SEED = Number(values.seed);
const OPERATOR = "vop_bench_storage";
const root = new URL("../../", import.meta.url).pathname;
const started = performance.now();

function log(text: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`[recording-storage ${seconds}s] ${text}\n`);
}

function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MB` : kb(bytes);
const times = (ratio: number) => `${ratio.toFixed(2)}×`;
const mark = (met: boolean) => (met ? "✓" : "✗");

// ---------------------------------------------------------------------------------------------
// Child processes and HTTP

function child(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ process: ChildProcess; out: () => string }> {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    VERBATIM_LOG_LEVEL: "error",
    ...env,
  };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const process_ = spawn(process.execPath, args, {
    cwd: root,
    env: merged as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const serving = args.includes("serve");
  return new Promise((resolve, reject) => {
    process_.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (serving && /listening on \S+/.test(out)) resolve({ process: process_, out: () => out });
    });
    process_.on("exit", (code) => {
      if (serving) reject(new Error(`${args.join(" ")} exited ${code}: ${out}`));
      else if (code === 0) resolve({ process: process_, out: () => out });
      else reject(new Error(`${args.join(" ")} exited ${code}: ${out}`));
    });
  });
}

async function stop(process_: ChildProcess): Promise<void> {
  if (process_.exitCode !== null || process_.signalCode !== null) return;
  process_.removeAllListeners("exit");
  const exited = new Promise((resolve) => process_.once("exit", resolve));
  process_.kill("SIGTERM");
  await exited;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function http(
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Answer> {
  return httpCall(agent, method, url, headers, body);
}

function operatorJson(serverUrl: string, path: string): Promise<unknown> {
  return operatorJsonOf(agent, serverUrl, OPERATOR, path);
}

// ---------------------------------------------------------------------------------------------
// Store sizes

type Group = "recorded" | "search" | "messages" | "other";
const GROUPS: readonly Group[] = ["recorded", "search", "messages", "other"];

function groupOf(table: string): Group {
  if (table.startsWith("ai_gateway_recorded") || table.startsWith("ai_gateway_body")) {
    return "recorded";
  }
  if (table.includes("search") || table.includes("fts")) return "search";
  if (/^ai_gateway_(messages|conversations|branches|chain_nodes|images)/.test(table)) {
    return "messages";
  }
  return "other";
}

interface Sizes {
  /** The whole store, bytes. */
  readonly total: number;
  /** Per table, its indexes (and on PostgreSQL its TOAST) included. */
  readonly tables: Map<string, number>;
}

interface Store {
  readonly name: "sqlite" | "postgres";
  /** The server's --db. */
  readonly db: string;
  sizes(): Promise<Sizes>;
  /** After the server stopped: a line about the store's files (SQLite: file + WAL after a checkpoint). */
  finish(): Promise<{ note: string; total?: number }>;
  drop(): Promise<void>;
}

function sqliteStore(folder: string): Store {
  const path = join(folder, "store.sqlite");
  return {
    name: "sqlite",
    db: path,
    async sizes() {
      // A reader beside the server: the pages as committed (the WAL's included), without
      // checkpointing; dbstat per table and index.
      const database = new Database(path, { readonly: true, fileMustExist: true });
      try {
        const pageSize = Number(database.pragma("page_size", { simple: true }));
        const pageCount = Number(database.pragma("page_count", { simple: true }));
        const owners = new Map<string, string>();
        for (const row of database
          .prepare("select name, tbl_name from sqlite_schema where name is not null")
          .all() as { name: string; tbl_name: string }[]) {
          owners.set(row.name, row.tbl_name);
        }
        const tables = new Map<string, number>();
        try {
          for (const row of database
            .prepare("select name, sum(pgsize) as bytes from dbstat group by name")
            .all() as { name: string; bytes: number }[]) {
            const table = owners.get(row.name) ?? row.name;
            tables.set(table, (tables.get(table) ?? 0) + Number(row.bytes));
          }
        } catch (error) {
          log(`dbstat unavailable (${String(error)}): totals only`);
        }
        // Pages freed and not reused yet (SQLite keeps them in the file): a row of their own.
        const free = Number(database.pragma("freelist_count", { simple: true }));
        tables.set("(free pages)", free * pageSize);
        return { total: pageSize * pageCount, tables };
      } finally {
        database.close();
      }
    },
    async finish() {
      const database = new Database(path);
      const [result] = database.pragma("wal_checkpoint(TRUNCATE)") as {
        busy: number;
        log: number;
      }[];
      const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
      const total = size(path) + size(`${path}-wal`);
      database.close();
      return {
        note: `file + WAL after wal_checkpoint(TRUNCATE) (busy ${result?.busy ?? "?"}): ${mb(total)}`,
        total,
      };
    },
    async drop() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function postgresStore(): Promise<Store> {
  const name = `verbatim_bench_storage_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return {
    name: "postgres",
    db: url.toString(),
    async sizes() {
      const result = await client.query<{ relname: string; bytes: string }>(
        `select c.relname, pg_total_relation_size(c.oid)::bigint as bytes
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.relkind in ('r', 'p', 'm')
            and n.nspname not in ('pg_catalog', 'information_schema')
            and n.nspname not like 'pg_toast%'`,
      );
      const tables = new Map(result.rows.map((row) => [row.relname, Number(row.bytes)]));
      return { total: [...tables.values()].reduce((sum, bytes) => sum + bytes, 0), tables };
    },
    async finish() {
      const result = await client.query<{ bytes: string }>(
        "select pg_database_size(current_database())::bigint as bytes",
      );
      return { note: `pg_database_size ${mb(Number(result.rows[0]?.bytes ?? 0))}` };
    },
    async drop() {
      await client.end();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The session

/** Distinct content and the naive baseline, counted as the session goes. */
class Accounting {
  distinct = 0;
  naive = 0;
  readonly #messages = new Set<string>();
  readonly #images = new Set<string>();
  readonly #responses = new Set<string>();

  constructor(session: ClaudeSession, envelope: string) {
    this.distinct =
      Buffer.byteLength(session.systemJson) +
      Buffer.byteLength(session.toolsJson) +
      Buffer.byteLength(envelope);
  }

  /** A message of a request: `key` its JSON without the cache marker, `sent` as it was sent. */
  message(key: string, sent: string, value: unknown): void {
    if (this.#messages.has(key)) return;
    this.#messages.add(key);
    let bytes = Buffer.byteLength(sent);
    for (const data of imagesOf(value)) {
      bytes -= data.length;
      if (!this.#images.has(data)) {
        this.#images.add(data);
        this.distinct += data.length;
      }
    }
    this.distinct += bytes;
  }

  request(body: string): void {
    this.naive += Buffer.byteLength(body);
  }

  response(body: Buffer): void {
    this.naive += body.length;
    const hash = createHash("sha256").update(body).digest("hex");
    if (this.#responses.has(hash)) return;
    this.#responses.add(hash);
    this.distinct += body.length;
  }
}

/** The base64 data of every image block in `value`. */
function imagesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(imagesOf);
  if (value === null || typeof value !== "object") return [];
  const record = value as Record<string, unknown>;
  const source = record["source"] as { type?: string; data?: string } | undefined;
  if (record["type"] === "image" && source?.type === "base64" && typeof source.data === "string") {
    return [source.data];
  }
  return Object.values(record).flatMap(imagesOf);
}

interface Checkpoint {
  readonly calls: number;
  readonly distinct: number;
  readonly naive: number;
  readonly lastRequest: number;
  readonly sizes: Sizes;
}

interface ReadBack {
  readonly call: number;
  readonly bytes: number;
  readonly p50: number;
  readonly p99: number;
  readonly exact: boolean;
}

interface RunResult {
  readonly database: string;
  readonly settings: string;
  readonly checkpoints: Map<number, Checkpoint>;
  readonly reads: ReadBack[];
  readonly finish: { note: string; total?: number };
  readonly conversations: number;
}

async function runSession(
  store: Store,
  settings: string,
  env: Record<string, string | undefined>,
): Promise<RunResult> {
  const session = new ClaudeSession(SEED);
  const upstream = await startClaudeUpstream(session);
  const created = await child(
    ["bin/verbatim.js", "keys", "create", "--db", store.db, "--subject", "bench-storage"],
    env,
  );
  const key = created.out().trim().split("\n").at(-1) ?? "";
  const server = await child(["bin/verbatim.js", "serve", "--db", store.db, "--port", "0"], {
    ...env,
    ANTHROPIC_API_KEY: "sk-ant-bench",
    ANTHROPIC_BASE_URL: upstream.url,
    VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
    VERBATIM_RECORD_PACK_AFTER_MS: String(PACK_AFTER_MS),
    VERBATIM_OPERATOR_TOKEN: OPERATOR,
  });
  const serverUrl = /listening on (\S+)/.exec(server.out())?.[1] ?? "";
  const label = `${store.name}, ${settings}`;
  try {
    const headers = {
      "content-type": "application/json",
      "x-api-key": key,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
      "user-agent": "claude-cli/2.0.0 (external, cli)",
      "x-app": "cli",
    };
    // The envelope's other fields (model first, as Claude Code sends them, then messages,
    // system, tools, metadata, max_tokens, stream).
    const head = `{"model":${JSON.stringify(session.model)},"messages":[`;
    const tail =
      `],"system":${session.systemJson},"tools":${session.toolsJson},` +
      `"metadata":${JSON.stringify(session.metadata)},"max_tokens":32000,"stream":true}`;
    const accounting = new Accounting(
      session,
      JSON.stringify({ model: session.model, metadata: session.metadata, max_tokens: 32000 }),
    );
    /** Each message's JSON text without the cache marker, and its value. */
    const history: { json: string; value: { role: string; content: unknown[] } }[] = [];
    const push = (value: { role: string; content: unknown[] }) =>
      history.push({ json: JSON.stringify(value), value });
    push(session.firstMessage());
    const checkpoints = new Map<number, Checkpoint>();
    const sentBodies = new Map<number, { request: string; response: Buffer }>();
    let conversationId: string | undefined;
    let lastRequest = 0;
    /** Waits until the conversation's cache report lists `calls` calls (all placed). */
    const placed = async (calls: number): Promise<{ call_id: string }[]> => {
      const deadline = performance.now() + 120_000;
      for (;;) {
        if (conversationId === undefined) {
          const list = (await operatorJson(
            serverUrl,
            "/ai-gateway/conversations?subject_uid=bench-storage&limit=10",
          )) as { data: { id: string }[] };
          conversationId = list.data.at(-1)?.id;
        }
        if (conversationId !== undefined) {
          const report = (await operatorJson(
            serverUrl,
            `/ai-gateway/conversations/${conversationId}/cache`,
          )) as { calls: { call_id: string }[] } | undefined;
          if (report !== undefined && report.calls.length >= calls) return report.calls;
        }
        if (performance.now() > deadline) throw new Error(`${label}: ${calls} calls not placed`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    /** The store's sizes once it stopped changing (the idle subject packed). */
    const settled = async (): Promise<Sizes> => {
      await new Promise((resolve) => setTimeout(resolve, PACK_AFTER_MS));
      let sizes = await store.sizes();
      for (let steady = 0; steady < 3;) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        const next = await store.sizes();
        const same =
          next.total === sizes.total &&
          [...next.tables].every(([table, bytes]) => sizes.tables.get(table) === bytes);
        steady = same ? steady + 1 : 0;
        sizes = next;
      }
      return sizes;
    };
    const measure = async (calls: number) => {
      let waited = performance.now();
      if (calls > 0) await placed(calls);
      waited = performance.now() - waited;
      const sizes = calls > 0 ? await settled() : await store.sizes();
      checkpoints.set(calls, {
        calls,
        distinct: accounting.distinct,
        naive: accounting.naive,
        lastRequest,
        sizes,
      });
      log(
        `${label}: ${calls} calls (all placed: the cache report listed them after ${waited.toFixed(0)} ms): store ${mb(sizes.total)}, ` +
          `distinct ${mb(accounting.distinct)}, naive ${mb(accounting.naive)}`,
      );
    };
    await measure(0);
    for (let call = 1; call <= LAST; call++) {
      const last = history.length - 1;
      const parts = history.map((message, index) =>
        index === last ? JSON.stringify(withCacheMarker(message.value)) : message.json,
      );
      history.forEach((message, index) =>
        accounting.message(message.json, parts[index] as string, message.value),
      );
      const body = head + parts.join(",") + tail;
      accounting.request(body);
      lastRequest = Buffer.byteLength(body);
      const answer = await http("POST", `${serverUrl}/v1/messages`, headers, body);
      if (answer.status !== 200) {
        throw new Error(`${label}, call ${call}: ${answer.status} ${answer.body.toString("utf8")}`);
      }
      accounting.response(answer.body);
      const read = readAnswerStream(answer.body.toString("utf8"));
      const expected = session.answer(call);
      if (JSON.stringify(read) !== JSON.stringify(expected)) {
        throw new Error(`${label}, call ${call}: the streamed answer is not the upstream's`);
      }
      if (call === LAST || call === 100) {
        sentBodies.set(call, { request: body, response: answer.body });
      }
      push(read);
      push(session.toolResult(call, read));
      if (call % 50 === 0) log(`${label}: call ${call}, request ${kb(lastRequest)}`);
      if (CHECKPOINTS.has(call)) await measure(call);
    }
    // Reading a call's request back.
    const calls = await placed(LAST);
    const list = (await operatorJson(
      serverUrl,
      "/ai-gateway/conversations?subject_uid=bench-storage&limit=10",
    )) as { data: unknown[] };
    const reads: ReadBack[] = [];
    for (const [call, sent] of [...sentBodies].sort(([a], [b]) => b - a)) {
      const id = calls[call - 1]?.call_id ?? "";
      const path = `${serverUrl}/ai-gateway/recorded-calls/${id}`;
      const auth = { authorization: `Bearer ${OPERATOR}` };
      const facts = (await operatorJson(serverUrl, `/ai-gateway/recorded-calls/${id}`)) as {
        request_bytes: number;
      };
      const expected = Buffer.from(sent.request, "utf8");
      const response = await http("GET", `${path}/response`, auth);
      const samples: number[] = [];
      let exact = response.status === 200 && response.body.equals(sent.response);
      let last: Buffer = Buffer.alloc(0);
      for (let index = -5; index < READS; index++) {
        const start = performance.now();
        const answer = await http("GET", `${path}/request`, auth);
        const ms = performance.now() - start;
        last = answer.body;
        if (answer.status !== 200 || !answer.body.equals(expected)) exact = false;
        if (index >= 0) samples.push(ms);
      }
      if (!exact) {
        // Loud, but the run goes on: the figures are printed, then the bench exits with 1.
        failures.push(
          `${label}: call ${call}'s recorded bytes differ from what was sent (request ` +
            `${expected.length} B sent, ${last.length} B read back, facts say ` +
            `${facts.request_bytes} B; response ${sent.response.length} B received, ` +
            `${response.body.length} B read back)`,
        );
        log(`FAILED: ${failures.at(-1)}`);
      }
      reads.push({
        call,
        bytes: expected.length,
        p50: percentile(samples, 0.5),
        p99: percentile(samples, 0.99),
        exact,
      });
      if (exact)
        log(`${label}: read call ${call}'s request (${kb(expected.length)}) ${READS}×, byte-exact`);
    }
    await stop(server.process);
    const finish = await store.finish();
    return {
      database: store.name,
      settings,
      checkpoints,
      reads,
      finish,
      conversations: list.data.length,
    };
  } finally {
    await stop(server.process);
    await upstream.close();
  }
}

/** Whether the server's sources name the setting (non-test TypeScript under packages/server/src). */
function compressionSetting(): boolean {
  const folder = join(root, "packages/server/src");
  return readdirSync(folder, { recursive: true, encoding: "utf8" }).some(
    (file) =>
      file.endsWith(".ts") &&
      !file.endsWith(".test.ts") &&
      readFileSync(join(folder, file), "utf8").includes("VERBATIM_RECORD_COMPRESSION"),
  );
}

// ---------------------------------------------------------------------------------------------
// Main

const variants: { settings: string; env: Record<string, string | undefined> }[] = [
  { settings: "defaults", env: { VERBATIM_RECORD_COMPRESSION: undefined } },
];
if (compressionSetting()) {
  variants.push({
    settings: "VERBATIM_RECORD_COMPRESSION=none",
    env: { VERBATIM_RECORD_COMPRESSION: "none" },
  });
} else {
  log("the server has no VERBATIM_RECORD_COMPRESSION setting: one run per database, its defaults");
}
const dialects: ("sqlite" | "postgres")[] = ["sqlite"];
if (values["sqlite-only"] !== true) {
  try {
    const probe = new pg.Client({ connectionString: pgUrl });
    await probe.connect();
    await probe.end();
    dialects.push("postgres");
  } catch (error) {
    log(`PostgreSQL unavailable at ${pgUrl} (${String(error)}): SQLite only`);
  }
}
const results: RunResult[] = [];
const overheads: OverheadResult[] = [];
/** Recorded bytes that did not come back as sent. */
const failures: string[] = [];
for (const dialect of dialects) {
  if (values["overhead-only"] !== true) {
    for (const variant of variants) {
      const store =
        dialect === "sqlite"
          ? sqliteStore(mkdtempSync(join(tmpdir(), "verbatim-bench-storage-")))
          : await postgresStore();
      try {
        log(`${dialect}, ${variant.settings}: ${LAST} calls`);
        results.push(await runSession(store, variant.settings, variant.env));
      } finally {
        await store.drop();
      }
    }
  }
  if (values["no-overhead"] !== true) {
    log(`${dialect}: recording overhead, CPU per call, reading call 500 back`);
    const overhead = await measureOverhead({
      dialect,
      pgUrl,
      quick,
      seed: SEED,
      pauseMs: Number(values["pause-ms"]),
      root,
      log,
    });
    overheads.push(overhead);
    for (const failure of overhead.failures) {
      failures.push(failure);
      log(`FAILED: ${failure}`);
    }
  }
}
agent.destroy();
closeOverheadAgent();

interface Figures {
  readonly growth: number;
  readonly groups: Record<Group, number>;
  readonly distinct: number;
  readonly naive: number;
  readonly first: number;
  readonly last: number;
}

function figures(result: RunResult, count: number): Figures {
  const at = (calls: number) => {
    const checkpoint = result.checkpoints.get(calls);
    if (checkpoint === undefined) throw new Error(`no checkpoint at ${calls}`);
    return checkpoint;
  };
  const base = at(0);
  const end = at(count);
  const grouped = (sizes: Sizes): Record<Group, number> => {
    const sums: Record<Group, number> = { recorded: 0, search: 0, messages: 0, other: 0 };
    for (const [table, bytes] of sizes.tables) sums[groupOf(table)] += bytes;
    // The rest of the store (SQLite: its schema and its free pages, a row of their own) is other.
    sums.other += sizes.total - GROUPS.reduce((sum, group) => sum + sums[group], 0);
    return sums;
  };
  const before = grouped(base.sizes);
  const after = grouped(end.sizes);
  const groups = Object.fromEntries(
    GROUPS.map((group) => [group, after[group] - before[group]]),
  ) as Record<Group, number>;
  const n = tenth(count);
  return {
    growth: end.sizes.total - base.sizes.total,
    groups,
    distinct: end.distinct,
    naive: end.naive,
    first: (at(n).sizes.total - base.sizes.total) / n,
    last: (end.sizes.total - at(count - n).sizes.total) / n,
  };
}

const out: string[] = [];
if (results.length > 0) {
  const session = new ClaudeSession(SEED);
  out.push(
    `\nA Claude-Code-shaped session recorded by verbatim serve (POST /v1/messages, stream: true): ` +
      `system prompt ${kb(Buffer.byteLength(session.systemJson))} + tools ${kb(Buffer.byteLength(session.toolsJson))} ` +
      `with every call, a screenshot of ${kb(session.image.length)} (base64) in calls 5, 30, 60, …; ` +
      `seed ${SEED}. Store growth from the store as the server started (migrated, one API key).\n`,
  );
  out.push(
    "| database | settings | calls | last request | distinct content | naive (every body whole) | naive / distinct | store growth | growth / distinct | recorded | recorded / distinct | search index | messages | other | growth per call, first 10 % | last 10 % | last / first |",
  );
  out.push(
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );

  for (const result of results) {
    for (const count of CALL_COUNTS) {
      const f = figures(result, count);
      const checkpoint = result.checkpoints.get(count);
      out.push(
        `| ${result.database} | ${result.settings} | ${count} | ${kb(checkpoint?.lastRequest ?? 0)} | ` +
          `${mb(f.distinct)} | ${mb(f.naive)} | ${times(f.naive / f.distinct)} | ${mb(f.growth)} | ` +
          `${times(f.growth / f.distinct)} | ${mb(f.groups.recorded)} | ${times(f.groups.recorded / f.distinct)} | ` +
          `${mb(f.groups.search)} | ${mb(f.groups.messages)} | ${mb(f.groups.other)} | ` +
          `${kb(f.first)} | ${kb(f.last)} | ${times(f.last / f.first)} |`,
      );
    }
  }

  out.push(
    `\nWhat each table grew by over the ${LAST} calls (indexes included; PostgreSQL: TOAST too):\n`,
  );
  const tableNames = new Set<string>();
  for (const result of results) {
    for (const checkpoint of [result.checkpoints.get(0), result.checkpoints.get(LAST)]) {
      for (const table of checkpoint?.sizes.tables.keys() ?? []) tableNames.add(table);
    }
  }
  const growthOf = (result: RunResult, table: string) =>
    (result.checkpoints.get(LAST)?.sizes.tables.get(table) ?? 0) -
    (result.checkpoints.get(0)?.sizes.tables.get(table) ?? 0);
  const grownTables = [...tableNames]
    .filter((table) => results.some((result) => growthOf(result, table) !== 0))
    .sort((a, b) => growthOf(results[0] as RunResult, b) - growthOf(results[0] as RunResult, a));
  out.push(
    `| table | group | ${results.map((result) => `${result.database}, ${result.settings}`).join(" | ")} |`,
  );
  out.push(`| --- | --- | ${results.map(() => "---:").join(" | ")} |`);
  for (const table of grownTables) {
    out.push(
      `| ${table} | ${groupOf(table)} | ${results.map((result) => mb(growthOf(result, table))).join(" | ")} |`,
    );
  }
  out.push("");
  for (const result of results) {
    out.push(
      `- ${result.database}, ${result.settings}: after the server stopped, ${result.finish.note}` +
        (result.finish.total === undefined
          ? ""
          : ` (growth by it: ${mb(result.finish.total - (result.checkpoints.get(0)?.sizes.total ?? 0))})`) +
        `; conversations of the session: ${result.conversations}`,
    );
  }

  out.push(
    `\nReading a call's request back: GET /ai-gateway/recorded-calls/:id/request, ${READS} reads after 5, ms (byte-exact: the request and the response equal what was sent and received):\n`,
  );
  out.push(
    "| database | settings | call | request body | p50 | p99 | byte-exact | goal p50 < 5 ms |",
  );
  out.push("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |");
  for (const result of results) {
    for (const read of result.reads) {
      out.push(
        `| ${result.database} | ${result.settings} | ${read.call} | ${kb(read.bytes)} | ${read.p50.toFixed(2)} | ` +
          `${read.p99.toFixed(2)} | ${mark(read.exact)} | ${mark(read.p50 < 5)} |`,
      );
    }
  }
}
const overheadTables = overheadReport(overheads);
out.push(overheadTables.text);
out.push(
  `\nSummary (${results.length > 0 ? `store: ${LAST} calls` : ""}${results.length > 0 && overheads.length > 0 ? "; " : ""}` +
    `${overheads.length > 0 ? `overhead: ${quick ? "--quick" : "full"} run` : ""}):\n`,
);
out.push("| goal | database | settings | figure | met |");
out.push("| --- | --- | --- | ---: | --- |");
for (const result of results) {
  const f = figures(result, LAST);
  const which = `| ${result.database} | ${result.settings} |`;
  const recorded = f.groups.recorded / f.distinct;
  out.push(
    `| store growth ≤ 4× distinct content ${which} ${times(f.growth / f.distinct)} | ${mark(f.growth <= 4 * f.distinct)} |`,
  );
  out.push(
    `| recorded bytes ≤ 1× distinct content ${which} ${times(recorded)} | ${mark(recorded <= 1)} |`,
  );
  if (result.settings === "defaults") {
    out.push(
      `| recorded bytes ≤ 0.4× distinct content (compressed) ${which} ${times(recorded)} | ${mark(recorded <= 0.4)} |`,
    );
  }
  out.push(
    `| growth per call flat: last 10 % ≤ 1.5× first 10 % ${which} ${kb(f.last)} / ${kb(f.first)} = ${times(f.last / f.first)} | ${mark(f.last <= 1.5 * f.first)} |`,
  );
  for (const read of result.reads) {
    out.push(
      `| reading call ${read.call}'s request (${kb(read.bytes)}): p50 < 5 ms ${which} ${read.p50.toFixed(2)} ms | ${mark(read.p50 < 5)} |`,
    );
    out.push(
      `| reading call ${read.call}'s request and response: byte-exact ${which} ${read.exact ? "equal" : "differ"} | ${mark(read.exact)} |`,
    );
  }
}
out.push(...overheadTables.summary);
process.stdout.write(`${out.join("\n")}\n`);
if (failures.length > 0) {
  process.stderr.write(`\nFAILED:\n${failures.join("\n")}\n`);
  process.exitCode = 1;
}
log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
