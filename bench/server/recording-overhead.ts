// What recording a call costs the caller and the machine (issue 33's overhead goals), for
// bench/server/recording-storage.ts (which runs it once per database, after its sessions):
// `verbatim serve` (recorded pass-through) and a bare pass-through proxy (bare-pass-through.ts)
// in front of the same local stub upstream (its own process; it reads each request whole and
// answers a small non-streamed Anthropic JSON message). Request bodies come from growing
// sessions (claude-session.ts, GrowingSession): each request is the previous plus a turn, so
// the store diffs it against the previous one as in real use.
// 1. Recording overhead: POST /v1/messages p50 through the server minus through the bare proxy,
//    request bodies of ~4 KB (3.2 – 5 KB) and ~400 KB (370 – 430 KB: Claude Code's ~43 KB of
//    system prompt and tools, turns of ~700 B; past 430 KB the session rewinds to 370 KB and
//    goes on with other turns). Sequential requests, blocks of 50 taking turns (as
//    recorded-calls.ts part 2 does; after the server's block, until it has placed its calls):
//    the upstream alone, the bare proxy, the server, and the call's commit, the floor a
//    recorded call pays: the same bodies written as the server writes them (BodyStore.prepare,
//    then one transaction of BodyStore.write and the call's row, timed alone) in process into
//    another store of the same database (SQLite: another file; PostgreSQL: another database).
//    Beside it one durable commit of a small row, back to back, as recorded-calls.ts gives it.
//    Goal: over the bare proxy and the call's commit < 1 ms (p50). Rows "Gemini" measure the
//    same for POST /v1beta/models/…:generateContent with the same sessions in Gemini's format
//    (gemini-session.ts; issue 35). `pauseMs` (recording-
//    storage.ts --pause-ms): the client waits that long after each answer (default 0: the
//    server places a call while the next ones are answered, at most 100 ms after its keep).
// 2. CPU per recorded call: the server process's user + system time (/proc/<pid>/stat, clock
//    ticks) over N calls of ~400 KB (200; --quick 100), its placing after the answers included,
//    against the bare proxy process's over N calls of its own. Goal: ≤ 2× the bare proxy's.
// 3. Reading a call back at call 500 of a session whose request is ~400 KB there (43 KB of
//    system prompt and tools, ~730 B a call): GET /ai-gateway/recorded-calls/:id/request, 50
//    reads after 5 unmeasured, p50 and p99; the request and the response must equal what was
//    sent and received. Goal: p50 < 5 ms.
// The server runs with its defaults; its log lines (VERBATIM_LOG_LEVEL=warn) are kept and
// reported.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { BodyStore } from "../../packages/server/src/gateway/recording/bodies/body-store.js";
import { openStore } from "../../packages/server/src/server/serve.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { insertRecordedCall } from "../../packages/server/src/store/repositories/recorded-calls.js";
import { inTransaction } from "../../packages/server/src/store/transaction.js";
import { ClaudeSession, GrowingSession, type GrowingSessionOptions } from "./claude-session.js";
import { GeminiSession } from "./gemini-session.js";
import { httpCall, operatorJson as operatorJsonOf, type Answer } from "./bench-http.js";

export interface OverheadSettings {
  readonly dialect: "sqlite" | "postgres";
  /** PostgreSQL: the server to create the run's databases on. */
  readonly pgUrl: string;
  readonly quick: boolean;
  readonly seed: number;
  /** The client's pause after each answer in part 1, ms (its tool running; default 0). */
  readonly pauseMs?: number;
  /** The checkout's root (bin/verbatim.js, bench/server/). */
  readonly root: string;
  readonly log: (text: string) => void;
}

export interface LatencyRow {
  readonly label: string;
  /** Mean request body of the measured calls, bytes. */
  readonly meanBytes: number;
  readonly calls: number;
  /** The client's pause after each answer. */
  readonly pauseMs: number;
  readonly upstream: number;
  readonly bare: number;
  readonly served: number;
  readonly servedP90: number;
  /** One durable commit of a small row, back to back, p50. */
  readonly smallCommit: number;
  /** The call's own write transaction (its new pieces, their chunks, its row), p50. */
  readonly callCommit: number;
  /** BodyStore.prepare of the same bodies (diff, chunk lookups, compression), p50. */
  readonly prepare: number;
}

export interface CpuRow {
  readonly calls: number;
  readonly meanBytes: number;
  /** ms of CPU per call. */
  readonly bare: number;
  readonly served: number;
  /** Clock ticks counted (resolution). */
  readonly bareTicks: number;
  readonly servedTicks: number;
  readonly tickMs: number;
}

export interface ReadRow {
  readonly call: number;
  readonly bytes: number;
  readonly reads: number;
  readonly p50: number;
  readonly p99: number;
  readonly exact: boolean;
}

export interface OverheadResult {
  readonly database: string;
  readonly latency: LatencyRow[];
  readonly cpu: CpuRow;
  readonly read: ReadRow;
  /** The server's log lines (warnings and errors) over the run. */
  readonly serveLog: string[];
  /** Recorded bytes that did not come back as sent, and other failures. */
  readonly failures: string[];
}

const OPERATOR = "vop_bench_overhead";
const BLOCK = 50;
const READS = 50;
/** Call of the read-back session whose request is read. */
const READ_CALL = 500;
const HEADERS = {
  "content-type": "application/json",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
  "user-agent": "claude-cli/2.0.0 (external, cli)",
  "x-app": "cli",
};

export function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mark = (met: boolean) => (met ? "✓" : "✗");
const mean = (list: readonly number[]) => list.reduce((sum, value) => sum + value, 0) / list.length;

// ---------------------------------------------------------------------------------------------
// Processes and HTTP

/** The stub upstream (plain JavaScript, its own process): reads the request, answers JSON. */
const UPSTREAM = `
const http = require("node:http");
let count = 0;
const server = http.createServer((request, response) => {
  request.on("data", () => undefined);
  request.on("end", () => {
    const n = ++count;
    if (request.url.includes(":generateContent")) {
      const gemini = JSON.stringify({
        candidates: [{ content: { parts: [{ text: "The answer is forty-two, as computed from the input of call " + n + "." }], role: "model" }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 17, totalTokenCount: 21 },
        modelVersion: "gemini-2.5-flash",
        responseId: "bench" + String(n).padStart(16, "0"),
      }, null, 2);
      response.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      response.end(gemini);
      return;
    }
    const body = JSON.stringify({
      id: "msg_01Bench" + String(n).padStart(16, "0"),
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [{ type: "text", text: "The answer is forty-two, as computed from the input of call " + n + "." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 17 },
    });
    response.writeHead(200, { "content-type": "application/json", "request-id": "req_bench_" + n });
    response.end(body);
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, "127.0.0.1", () => process.stdout.write("http://127.0.0.1:" + server.address().port + "\\n"));
process.on("SIGTERM", () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

interface Child {
  readonly process: ChildProcess;
  /** Its stdout and stderr so far. */
  out(): string;
  stdout(): string;
}

/**
 * Starts a child and resolves once `ready` matches its stdout (or, with no `ready`, once it
 * exits with 0). Its stderr is kept (and passed on).
 */
function child(
  root: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready?: RegExp,
): Promise<Child> {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    VERBATIM_LOG_LEVEL: "warn",
    ...env,
  };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const process_ = spawn(process.execPath, args, {
    cwd: root,
    env: merged as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stdout = "";
  const handle = { process: process_, out: () => out, stdout: () => stdout };
  return new Promise((resolve, reject) => {
    process_.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      stdout += chunk.toString();
      if (ready?.test(stdout) === true) resolve(handle);
    });
    process_.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      process.stderr.write(chunk);
    });
    process_.on("exit", (code) => {
      if (ready === undefined && code === 0) resolve(handle);
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

/** One kept-alive connection for every call, as a client session keeps. */
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

let tickMs: number | undefined;

/** ms of one clock tick of /proc/<pid>/stat (getconf CLK_TCK, 100 on Linux). */
function clockTickMs(): number {
  if (tickMs === undefined) {
    let ticks = 100;
    try {
      ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      // 100 then.
    }
    tickMs = 1000 / ticks;
  }
  return tickMs;
}

/** Clock ticks of CPU time (user + system, every thread) a process has used. */
function cpuTicks(process_: ChildProcess): number {
  const stat = readFileSync(`/proc/${process_.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line.
  return Number(fields[11]) + Number(fields[12]);
}

/** Its ticks once it has used none for 300 ms (work after the answers counted), at most 10 s. */
async function settledTicks(process_: ChildProcess): Promise<number> {
  let last = cpuTicks(process_);
  const deadline = performance.now() + 10_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = cpuTicks(process_);
    if (now === last || performance.now() > deadline) return now;
    last = now;
  }
}

// ---------------------------------------------------------------------------------------------
// Stores

interface Stores {
  /** The server's --db. */
  readonly serveDb: string;
  /** The in-process store of the commit baseline (the same database, another file or database). */
  readonly commitDb: string;
  drop(): Promise<void>;
}

async function stores(settings: OverheadSettings): Promise<Stores> {
  if (settings.dialect === "sqlite") {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-overhead-"));
    return {
      serveDb: join(folder, "serve.sqlite"),
      commitDb: join(folder, "commit.sqlite"),
      async drop() {
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  const suffix = randomBytes(5).toString("hex");
  const names = [`verbatim_bench_overhead_${suffix}`, `verbatim_bench_commit_${suffix}`];
  const admin = new pg.Client({ connectionString: settings.pgUrl });
  await admin.connect();
  for (const name of names) await admin.query(`create database ${name}`);
  const urlOf = (name: string) => {
    const url = new URL(settings.pgUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    serveDb: urlOf(names[0] as string),
    commitDb: urlOf(names[1] as string),
    async drop() {
      for (const name of names) await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** One durable commit of a small row, back to back (recorded-calls.ts's first baseline). */
async function smallRowCommits(database: StoreDatabase): Promise<number> {
  const samples: number[] = [];
  for (let run = 0; run < 100; run++) {
    const start = performance.now();
    await inTransaction(database, (db) =>
      db
        .insertInto("ai_gateway_conversations")
        .values({
          id: `conv_commit_${randomBytes(6).toString("hex")}`,
          subject_uid: "commit",
          created_at: "",
          metadata: "{}",
        })
        .execute(),
    );
    samples.push(performance.now() - start);
  }
  return percentile(samples, 0.5);
}

/**
 * The call's commit as the server makes it (gateway/recording/calls.ts, #keepRow): its bodies
 * prepared (timed apart), then one transaction writing their new pieces and chunks and the
 * call's row (timed), then the request remembered as the next one's base.
 */
class CommitBaseline {
  readonly commits: number[] = [];
  readonly prepares: number[] = [];
  readonly #bodies: BodyStore;

  constructor(private readonly database: StoreDatabase) {
    this.#bodies = new BodyStore(database);
  }

  async record(subjectUid: string, request: Buffer, response: Buffer, counted: boolean) {
    const id = `call_commit_${randomBytes(8).toString("hex")}`;
    const createdAt = new Date().toISOString();
    let start = performance.now();
    const prepared = await this.#bodies.prepare(subjectUid, request, response);
    const prepare = performance.now() - start;
    start = performance.now();
    const remembered = await inTransaction(this.database, async (db) => {
      const { columns, remembered } = await this.#bodies.write(db, prepared, createdAt);
      await insertRecordedCall(db, {
        id,
        subject_uid: subjectUid,
        conversation_id: "",
        wire_format: "anthropic-messages",
        path: "/v1/messages",
        model: "claude-sonnet-4-5-20250929",
        tip_prefix_sha256: "",
        message_count: 0,
        matched_count: 0,
        previous_call_id: null,
        status_code: 200,
        request_headers: JSON.stringify(HEADERS),
        request_body: "",
        response_headers: '{"content-type":"application/json","request-id":"req_bench"}',
        response_body_base64: "",
        redacted: 0,
        input_tokens: null,
        output_tokens: null,
        cache_read_tokens: null,
        cache_write_tokens: null,
        duration_ms: 1,
        created_at: createdAt,
        ...columns,
      });
      return remembered;
    });
    const commit = performance.now() - start;
    this.#bodies.remember(prepared, id, remembered);
    if (counted) {
      this.commits.push(commit);
      this.prepares.push(prepare);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The measurements

interface Targets {
  readonly upstreamUrl: string;
  readonly bareUrl: string;
  readonly serverUrl: string;
  readonly key: string;
  readonly readKey: string;
  readonly bare: Child;
  readonly server: Child;
}

/** A sample answer of the stub (for the commit baseline's response body). */
function stubAnswer(n: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: `msg_01Bench${String(n).padStart(16, "0")}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [
        {
          type: "text",
          text: `The answer is forty-two, as computed from the input of call ${n}.`,
        },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 17,
      },
    }),
  );
}

/** The stub's answer to a Gemini call (the commit baseline's response body of the Gemini rows). */
function geminiStubAnswer(n: number): Buffer {
  return Buffer.from(
    JSON.stringify(
      {
        candidates: [
          {
            content: {
              parts: [
                { text: `The answer is forty-two, as computed from the input of call ${n}.` },
              ],
              role: "model",
            },
            finishReason: "STOP",
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 17, totalTokenCount: 21 },
        modelVersion: "gemini-2.5-flash",
        responseId: `bench${String(n).padStart(16, "0")}`,
      },
      null,
      2,
    ),
  );
}

const GEMINI_HEADERS = {
  "content-type": "application/json",
  "user-agent": "GeminiCLI/0.61.0 (linux; x64)",
  "x-goog-api-client": "google-genai-sdk/1.30.0 gl-node/v24.0.0",
};

async function post(
  url: string,
  key: string,
  body: Buffer,
  what: string,
  gemini = false,
): Promise<Answer> {
  const answer = gemini
    ? await http(
        "POST",
        `${url}/v1beta/models/gemini-2.5-flash:generateContent`,
        { ...GEMINI_HEADERS, "x-goog-api-key": key },
        body,
      )
    : await http("POST", `${url}/v1/messages`, { ...HEADERS, "x-api-key": key }, body);
  if (answer.status !== 200) {
    throw new Error(`${what}: ${answer.status} ${answer.body.toString("utf8").slice(0, 300)}`);
  }
  return answer;
}

interface SizeCase {
  readonly label: string;
  readonly options: GrowingSessionOptions;
  /** Gemini rows: the same sessions as generateContent requests (gemini-session.ts). */
  readonly gemini?: boolean;
}

function sizeCases(seed: number): SizeCase[] {
  const claude = new ClaudeSession(seed);
  const shortSystem = JSON.stringify([
    {
      type: "text",
      text: (claude.system[1] as { text: string }).text.slice(0, 1500),
    },
  ]);
  const cases: SizeCase[] = [
    {
      label: "~4 KB",
      options: { seed: seed + 1, systemJson: shortSystem, turnBytes: 250, from: 3200, to: 5000 },
    },
    {
      label: "~400 KB",
      options: {
        seed: seed + 2,
        systemJson: claude.systemJson,
        toolsJson: claude.toolsJson,
        turnBytes: 700,
        from: 370_000,
        to: 430_000,
      },
    },
  ];
  // Issue 35: Gemini calls (POST /v1beta/models/…:generateContent) within the same goal.
  return [
    ...cases,
    ...cases.map((size) => ({ ...size, label: `Gemini ${size.label}`, gemini: true })),
  ];
}

/** Part 1 for one size: the targets and the commit baseline in blocks taking turns. */
async function latency(
  targets: Targets,
  baseline: CommitBaseline,
  smallCommit: number,
  size: SizeCase,
  count: number,
  pauseMs: number,
  label: string,
  log: (text: string) => void,
): Promise<{
  row: LatencyRow;
  bare: GrowingSession | GeminiSession;
  served: GrowingSession | GeminiSession;
}> {
  const pause = () =>
    pauseMs > 0 ? new Promise((resolve) => setTimeout(resolve, pauseMs)) : undefined;
  const session = () =>
    size.gemini === true ? new GeminiSession(size.options) : new GrowingSession(size.options);
  const sessions = {
    upstream: session(),
    bare: session(),
    served: session(),
    commit: session(),
  };
  const urls = {
    upstream: targets.upstreamUrl,
    bare: targets.bareUrl,
    served: targets.serverUrl,
  };
  const samples = { upstream: [] as number[], bare: [] as number[], served: [] as number[] };
  const sizes: number[] = [];
  // One subject for every size, as the server's calls are one key's.
  const commitSubject = "bench-commit";
  // A first round of blocks warms every target up and is not counted (the server's lazily
  // loaded modules, its console worker; the first body of a session is written whole).
  for (let done = -BLOCK; done < count; done += BLOCK) {
    for (let index = 0; index < BLOCK; index++) {
      await pause();
      await baseline.record(
        commitSubject,
        sessions.commit.next(),
        size.gemini === true ? geminiStubAnswer(done + index) : stubAnswer(done + index),
        done >= 0,
      );
    }
    for (const target of ["upstream", "bare", "served"] as const) {
      for (let index = 0; index < BLOCK; index++) {
        const body = sessions[target].next();
        const start = performance.now();
        await post(
          urls[target],
          targets.key,
          body,
          `${label}, ${size.label}, ${target}`,
          size.gemini,
        );
        const ms = performance.now() - start;
        if (done >= 0) {
          samples[target].push(ms);
          if (target === "served") sizes.push(body.length);
        }
        await pause();
      }
      // The server places the block's last calls once it is quiet: that ends before the next
      // block (of the commit baseline, the upstream alone) starts.
      if (target === "served") await settledTicks(targets.server.process);
    }
  }
  log(
    `${label}: ${size.label} bodies (mean ${kb(mean(sizes))}), ${count} calls each: ` +
      `bare ${percentile(samples.bare, 0.5).toFixed(2)} ms, verbatim ${percentile(samples.served, 0.5).toFixed(2)} ms p50`,
  );
  return {
    row: {
      label: size.label,
      meanBytes: mean(sizes),
      calls: count,
      pauseMs,
      upstream: percentile(samples.upstream, 0.5),
      bare: percentile(samples.bare, 0.5),
      served: percentile(samples.served, 0.5),
      servedP90: percentile(samples.served, 0.9),
      smallCommit,
      callCommit: percentile(baseline.commits.splice(0), 0.5),
      prepare: percentile(baseline.prepares.splice(0), 0.5),
    },
    bare: sessions.bare,
    served: sessions.served,
  };
}

/** Part 2: N calls to the bare proxy, then N to the server, each process's CPU before and after. */
async function cpu(
  targets: Targets,
  bare: GrowingSession,
  served: GrowingSession,
  count: number,
  label: string,
  log: (text: string) => void,
): Promise<CpuRow> {
  const sizes: number[] = [];
  const measure = async (url: string, process_: ChildProcess, session: GrowingSession) => {
    const before = await settledTicks(process_);
    for (let index = 0; index < count; index++) {
      const body = session.next();
      if (process_ === targets.server.process) sizes.push(body.length);
      await post(url, targets.key, body, `${label}, CPU`);
    }
    return (await settledTicks(process_)) - before;
  };
  const bareTicks = await measure(targets.bareUrl, targets.bare.process, bare);
  const servedTicks = await measure(targets.serverUrl, targets.server.process, served);
  const tick = clockTickMs();
  const row = {
    calls: count,
    meanBytes: mean(sizes),
    bare: (bareTicks * tick) / count,
    served: (servedTicks * tick) / count,
    bareTicks,
    servedTicks,
    tickMs: tick,
  };
  log(
    `${label}: CPU per call at ${kb(row.meanBytes)}: bare proxy ${row.bare.toFixed(2)} ms, ` +
      `verbatim ${row.served.toFixed(2)} ms (${count} calls each)`,
  );
  return row;
}

/** Part 3: a session of READ_CALL calls, then its last call's request read back. */
async function readBack(
  targets: Targets,
  seed: number,
  label: string,
  failures: string[],
  log: (text: string) => void,
): Promise<ReadRow> {
  const claude = new ClaudeSession(seed);
  const session = new GrowingSession({
    seed: seed + 3,
    systemJson: claude.systemJson,
    toolsJson: claude.toolsJson,
    turnBytes: 750,
  });
  let sent: { request: Buffer; response: Buffer } | undefined;
  for (let call = 1; call <= READ_CALL; call++) {
    const body = session.next();
    const answer = await post(targets.serverUrl, targets.readKey, body, `${label}, read-back`);
    if (call === READ_CALL) sent = { request: body, response: answer.body };
    if (call % 100 === 0)
      log(`${label}: read-back session, call ${call}, request ${kb(body.length)}`);
  }
  if (sent === undefined) throw new Error("no call sent");
  // The call's id: the conversation's cache report lists its calls once placed.
  const deadline = performance.now() + 120_000;
  let conversationId: string | undefined;
  let calls: { call_id: string }[] = [];
  for (;;) {
    if (conversationId === undefined) {
      const list = (await operatorJson(
        targets.serverUrl,
        "/ai-gateway/conversations?subject_uid=bench-overhead-read&limit=10",
      )) as { data: { id: string }[] };
      if (list.data.length > 1) {
        failures.push(`${label}: the read-back session is ${list.data.length} conversations`);
      }
      conversationId = list.data.at(-1)?.id;
    }
    if (conversationId !== undefined) {
      const report = (await operatorJson(
        targets.serverUrl,
        `/ai-gateway/conversations/${conversationId}/cache`,
      )) as { calls: { call_id: string }[] } | undefined;
      if (report !== undefined && report.calls.length >= READ_CALL) {
        calls = report.calls;
        break;
      }
    }
    if (performance.now() > deadline) throw new Error(`${label}: ${READ_CALL} calls not placed`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const id = calls[READ_CALL - 1]?.call_id ?? "";
  const auth = { authorization: `Bearer ${OPERATOR}` };
  const path = `${targets.serverUrl}/ai-gateway/recorded-calls/${id}`;
  const response = await http("GET", `${path}/response`, auth);
  let exact = response.status === 200 && response.body.equals(sent.response);
  const samples: number[] = [];
  let last: Buffer = Buffer.alloc(0);
  for (let index = -5; index < READS; index++) {
    const start = performance.now();
    const answer = await http("GET", `${path}/request`, auth);
    const ms = performance.now() - start;
    last = answer.body;
    if (answer.status !== 200 || !answer.body.equals(sent.request)) exact = false;
    if (index >= 0) samples.push(ms);
  }
  if (!exact) {
    failures.push(
      `${label}: call ${READ_CALL}'s recorded bytes differ from what was sent (request ` +
        `${sent.request.length} B sent, ${last.length} B read back; response ` +
        `${sent.response.length} B received, ${response.body.length} B read back)`,
    );
  }
  const row = {
    call: READ_CALL,
    bytes: sent.request.length,
    reads: READS,
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
    exact,
  };
  log(
    `${label}: read call ${READ_CALL}'s request (${kb(row.bytes)}) ${READS}×: p50 ${row.p50.toFixed(2)} ms, ` +
      `${exact ? "byte-exact" : "NOT byte-exact"}`,
  );
  return row;
}

/** All three on one database: one server, one bare proxy, one stub upstream. */
export async function measureOverhead(settings: OverheadSettings): Promise<OverheadResult> {
  const { root, log, quick } = settings;
  const label = `${settings.dialect}, overhead`;
  const failures: string[] = [];
  const where = await stores(settings);
  const started: Child[] = [];
  let baselineStore: StoreDatabase | undefined;
  try {
    const upstream = await child(root, ["--input-type=commonjs", "-e", UPSTREAM], {}, /\n/);
    started.push(upstream);
    const upstreamUrl = upstream.stdout().split("\n")[0]?.trim() ?? "";
    const bare = await child(
      root,
      ["bin/run-ts.js", "bench/server/bare-pass-through.ts", upstreamUrl],
      {},
      /\n/,
    );
    started.push(bare);
    const bareUrl = bare.stdout().split("\n")[0]?.trim() ?? "";
    const keyOf = async (subject: string) => {
      const created = await child(
        root,
        ["bin/verbatim.js", "keys", "create", "--db", where.serveDb, "--subject", subject],
        {},
      );
      return created.stdout().trim().split("\n").at(-1) ?? "";
    };
    const key = await keyOf("bench-overhead");
    const readKey = await keyOf("bench-overhead-read");
    const server = await child(
      root,
      ["bin/verbatim.js", "serve", "--db", where.serveDb, "--port", "0"],
      {
        ANTHROPIC_API_KEY: "sk-ant-bench",
        ANTHROPIC_BASE_URL: upstreamUrl,
        GEMINI_API_KEY: "gemini-bench",
        GEMINI_BASE_URL: `${upstreamUrl}/v1beta`,
        VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
        VERBATIM_OPERATOR_TOKEN: OPERATOR,
        VERBATIM_RECORD_COMPRESSION: undefined,
      },
      /listening on \S+/,
    );
    started.push(server);
    const serverUrl = /listening on (\S+)/.exec(server.stdout())?.[1] ?? "";
    const logFrom = server.out().length;
    const targets: Targets = { upstreamUrl, bareUrl, serverUrl, key, readKey, bare, server };

    baselineStore = await openStore(where.commitDb, root, {}, { checkpointThread: true });
    await migrateDatabase(baselineStore);
    const smallCommit = await smallRowCommits(baselineStore);
    const baseline = new CommitBaseline(baselineStore);

    const count = quick ? 200 : 600;
    const rows: LatencyRow[] = [];
    let sessions: { bare: GrowingSession; served: GrowingSession } | undefined;
    for (const size of sizeCases(settings.seed)) {
      const measured = await latency(
        targets,
        baseline,
        smallCommit,
        size,
        count,
        settings.pauseMs ?? 0,
        label,
        log,
      );
      rows.push(measured.row);
      // Part 2 goes on with the last Anthropic sessions (its calls are /v1/messages).
      if (size.gemini !== true) {
        sessions = measured as { bare: GrowingSession; served: GrowingSession };
      }
    }
    if (sessions === undefined) throw new Error("no sizes");
    const cpuRow = await cpu(
      targets,
      sessions.bare,
      sessions.served,
      quick ? 100 : 200,
      label,
      log,
    );
    const read = await readBack(targets, settings.seed, label, failures, log);
    const serveLog = server
      .out()
      .slice(logFrom)
      .split("\n")
      .filter((line) => line.trim() !== "");
    if (serveLog.length > 0) log(`${label}: the server logged ${serveLog.length} lines`);
    return { database: settings.dialect, latency: rows, cpu: cpuRow, read, serveLog, failures };
  } finally {
    for (const process_ of started.reverse()) await stop(process_.process);
    await baselineStore?.close();
    await where.drop();
  }
}

/** The tables of the results, and their rows for the final summary (`| goal | database | settings | figure | met |`). */
export function overheadReport(results: readonly OverheadResult[]): {
  text: string;
  summary: string[];
} {
  const out: string[] = [];
  const summary: string[] = [];
  const first = results[0];
  if (first === undefined) return { text: "", summary };
  out.push(
    `\nRecording overhead: POST /v1/messages (JSON answers; rows "Gemini": POST ` +
      `/v1beta/models/gemini-2.5-flash:generateContent, the same sessions in Gemini's format) ` +
      `through verbatim serve (recorded, defaults) ` +
      `over a bare pass-through proxy, both in front of the same stub upstream; growing sessions ` +
      `(each request the previous plus a turn), sequential, blocks of ${BLOCK} taking turns (after ` +
      `the server's block, until it has placed its calls: 300 ms without CPU time), ms p50 ` +
      `(the call's commit: its pieces and row written as the server writes them, in process, ` +
      `into another store of the same database, in blocks taking turns with the requests):\n`,
  );
  out.push(
    "| database | request body | calls | client pause after each answer | upstream alone | bare proxy | verbatim | verbatim p90 | over the bare proxy | one durable commit (small row, back to back) | the call's commit | its bodies prepared (diff, compression; the server prepares the request's part while the upstream answers) | over the bare proxy and the call's commit | goal < 1 ms |",
  );
  out.push(
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  );
  for (const result of results) {
    for (const row of result.latency) {
      const over = row.served - row.bare;
      const beyond = over - row.callCommit;
      out.push(
        `| ${result.database} | ${row.label} (mean ${kb(row.meanBytes)}) | ${row.calls} | ${row.pauseMs} ms | ` +
          `${row.upstream.toFixed(2)} | ${row.bare.toFixed(2)} | ${row.served.toFixed(2)} | ` +
          `${row.servedP90.toFixed(2)} | +${over.toFixed(2)} | ${row.smallCommit.toFixed(2)} | ` +
          `${row.callCommit.toFixed(2)} | ${row.prepare.toFixed(2)} | ${beyond >= 0 ? "+" : ""}${beyond.toFixed(2)} | ${mark(beyond < 1)} |`,
      );
      summary.push(
        `| recording overhead, ${row.label} bodies: verbatim − bare proxy − the call's commit < 1 ms (p50) | ${result.database} | defaults | ` +
          `${over.toFixed(2)} − ${row.callCommit.toFixed(2)} = ${beyond.toFixed(2)} ms | ${mark(beyond < 1)} |`,
      );
    }
  }
  out.push(
    `\nCPU per recorded call: process user + system time (/proc/<pid>/stat, ${first.cpu.tickMs} ms ticks) over ` +
      `N calls of ~400 KB bodies to each (the bare proxy's, then the server's, its placing after the answers included):\n`,
  );
  out.push(
    "| database | calls | request body (mean) | bare proxy ms / call | verbatim ms / call | verbatim / bare | ticks (bare, verbatim) | goal ≤ 2× |",
  );
  out.push("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const result of results) {
    const row = result.cpu;
    const ratio = row.served / row.bare;
    out.push(
      `| ${result.database} | ${row.calls} | ${kb(row.meanBytes)} | ${row.bare.toFixed(2)} | ${row.served.toFixed(2)} | ` +
        `${ratio.toFixed(2)}× | ${row.bareTicks}, ${row.servedTicks} | ${mark(ratio <= 2)} |`,
    );
    summary.push(
      `| CPU per recorded call (~400 KB) ≤ 2× the bare proxy's | ${result.database} | defaults | ` +
        `${row.served.toFixed(2)} / ${row.bare.toFixed(2)} ms = ${ratio.toFixed(2)}× | ${mark(ratio <= 2)} |`,
    );
  }
  out.push(
    `\nReading a call back at call ${READ_CALL} of a session (43 KB of system prompt and tools, ~730 B a call): ` +
      `GET /ai-gateway/recorded-calls/:id/request, ${first.read.reads} reads after 5, ms (byte-exact: the ` +
      `request and the response equal what was sent and received):\n`,
  );
  out.push("| database | call | request body | p50 | p99 | byte-exact | goal p50 < 5 ms |");
  out.push("| --- | ---: | ---: | ---: | ---: | --- | --- |");
  for (const result of results) {
    const row = result.read;
    out.push(
      `| ${result.database} | ${row.call} | ${kb(row.bytes)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ` +
        `${mark(row.exact)} | ${mark(row.p50 < 5)} |`,
    );
    summary.push(
      `| reading call ${row.call}'s request (${kb(row.bytes)}) of a growing session: p50 < 5 ms | ${result.database} | defaults | ${row.p50.toFixed(2)} ms | ${mark(row.p50 < 5)} |`,
    );
    summary.push(
      `| reading call ${row.call}'s request and response: byte-exact | ${result.database} | defaults | ${row.exact ? "equal" : "differ"} | ${mark(row.exact)} |`,
    );
  }
  for (const result of results) {
    out.push(
      `\n- ${result.database}: the server logged ${result.serveLog.length} lines (warnings and errors) over these runs` +
        (result.serveLog.length === 0
          ? ""
          : `, the first: ${result.serveLog
              .slice(0, 3)
              .map((line) => `\`${line.slice(0, 300)}\``)
              .join("; ")}`),
    );
  }
  return { text: out.join("\n"), summary };
}

/** Closes the kept-alive connections (call once every run is done). */
export function closeOverheadAgent(): void {
  agent.destroy();
}
