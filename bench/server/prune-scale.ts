// Issue 33's goal: "Prune of 1 million recorded calls completes in bounded memory, with the
// server serving" (docs/server/retention.md).
// 1. A store is seeded directly with SQL after migrating it (SQLite: better-sqlite3 prepared
//    statements in large transactions; PostgreSQL, `--pg`, a fresh database
//    verbatim_bench_prune_<hex> created and dropped: multi-row INSERTs over unnest() arrays):
//    N recorded calls (default 1,000,000) in conversations of 100 calls, of 10 subjects in turn,
//    each call with one piece of ~430 bytes (codec 0: its request then its response) named by
//    flat request and response manifests, ids sorted by time. The first half of the
//    conversations (and their calls and pieces) are dated in 2025, the second half in 2026-11.
// 2. `verbatim serve` runs on it (child process, loopback), and a load client requests, one
//    after the other, GET /ai-gateway/conversations?limit=20 and the request body of a call of
//    a kept conversation (GET /ai-gateway/recorded-calls/:id/request, checked byte for byte),
//    with the operator token: a baseline window (~5 s), then while the prune runs.
// 3. `verbatim db prune --before 2026-01-01T00:00:00Z --db … --json` runs as a child process
//    beside the server: its wall time, what it removed (its JSON), its peak RSS (VmRSS sampled
//    every 50 ms from /proc/<pid>/status, and VmHWM read by the process itself at exit through
//    an --import hook), the server's latencies p50/p99 before vs during, failed requests.
// 4. Bounded memory: the same on a store of N/10 calls first; peak RSS at N against N/10 (goal
//    ≤ 1.5×). Beside each, the peak of a prune that removes nothing on the same store (the
//    floor: Node, tsx and the store's modules), what each store holds afterwards, and the
//    prune's memory at exit: V8 heap, external, and the rest (native: SQLite's page cache…).
// 5. The server's own rolling retention (VERBATIM_RETENTION_DAYS, a cutoff between the halves)
//    on a fresh store of N/10 calls: the same prune inside `verbatim serve`, at its start, with
//    the load client requesting: how long until it logs its report, how many answers meanwhile
//    and the slowest (on SQLite its queries answer synchronously, so it may hold the event loop).
// `--chunks K`: each piece also has K rows in the chunk index (ai_gateway_body_chunks), as a
//    piece of 2 KiB or more has (default 0: a piece this small has none).
// `--phases` (SQLite): the N store is copied before the CLI's prune, and the copy pruned again
//    in process (pruneStore) with every query timed by kind, and the conversations' pace per
//    tenth: where the time goes.
// `node bin/run-ts.js bench/server/prune-scale.ts [--quick] [--calls N] [--pg] [--pg-url URL]
//  [--baseline-s 5] [--chunks K] [--phases]` (--quick: 100,000 calls; progress on stderr, results on stdout).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from "kysely";
import pg from "pg";
import { newId } from "../../packages/server/src/gateway/ids.js";
import { pruneStore } from "../../packages/server/src/gateway/maintenance/retention.js";
import { encodeManifest } from "../../packages/server/src/gateway/recording/bodies/manifest.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    calls: { type: "string" },
    pg: { type: "boolean", default: false },
    "pg-url": { type: "string" },
    "baseline-s": { type: "string", default: "5" },
    phases: { type: "boolean", default: false },
    chunks: { type: "string", default: "0" },
  },
});
const PER_CONVERSATION = 100;
const SUBJECTS = 10;
/** Calls: a whole number of conversations, as many old as new. */
const CALLS =
  Math.round(Number(values.calls ?? (values.quick ? 100_000 : 1_000_000)) / 2000) * 2000;
const SMALL = CALLS / 10;
const BEFORE = "2026-01-01T00:00:00Z";
const BASELINE_MS = Number(values["baseline-s"]) * 1000;
/** Rows of the chunk index per piece (0: a piece under 2 KiB has none; a larger one has some). */
const CHUNKS = Number(values.chunks);
const OPERATOR = "vop_bench_prune";
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const root = new URL("../../", import.meta.url).pathname;
const started = performance.now();

if (!(CALLS >= 2000)) throw new Error("--calls must be at least 2000");

function log(text: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`[prune-scale ${seconds}s] ${text}\n`);
}

function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ms2 = (ms: number) => ms.toFixed(2);
const mark = (met: boolean) => (met ? "✓" : "✗");
const count = (n: number) => n.toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------
// The store's rows

const FILLER = randomBytes(600).toString("base64").replace(/[+/=]/g, "x");
const REQUEST_HEADERS = '{"content-type":"application/json","anthropic-version":"2023-06-01"}';
const RESPONSE_HEADERS = '{"content-type":"application/json"}';
const OLD_FROM = Date.UTC(2025, 0, 1);
const OLD_TO = Date.UTC(2025, 11, 1);
const NEW_FROM = Date.UTC(2026, 10, 1);
const NEW_TO = Date.UTC(2026, 10, 28);

interface ConversationRow {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
}

interface CallRow {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly tip_prefix_sha256: string;
  readonly message_count: number;
  readonly matched_count: number;
  readonly previous_call_id: string | null;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly duration_ms: number;
  readonly created_at: string;
  readonly request_manifest: Buffer;
  readonly response_manifest: Buffer;
  readonly request_size: number;
  readonly response_size: number;
}

interface PieceRow {
  readonly id: number;
  readonly subject_uid: string;
  readonly size: number;
  readonly bytes: Buffer;
  readonly created_at: string;
}

interface Batch {
  readonly conversation: ConversationRow;
  readonly calls: CallRow[];
  readonly pieces: PieceRow[];
  /** The request bodies, by call (to check reads). */
  readonly requests: Buffer[];
  readonly old: boolean;
}

/** The store's conversations in time order, each with its calls and pieces. */
function* storeRows(calls: number): Generator<Batch> {
  const conversations = calls / PER_CONVERSATION;
  const half = conversations / 2;
  const oldSpacing = Math.floor((OLD_TO - OLD_FROM) / half);
  const newSpacing = Math.floor((NEW_TO - NEW_FROM) / half);
  let piece = 0;
  for (let index = 0; index < conversations; index++) {
    const old = index < half;
    const spacing = old ? oldSpacing : newSpacing;
    const start = (old ? OLD_FROM : NEW_FROM) + (old ? index : index - half) * spacing;
    const step = Math.min(60_000, Math.floor(spacing / PER_CONVERSATION));
    const subject = `bench-prune-${index % SUBJECTS}`;
    const conversationId = newId("conv", start);
    const batch: Batch = {
      conversation: {
        id: conversationId,
        subject_uid: subject,
        created_at: new Date(start).toISOString(),
      },
      calls: [],
      pieces: [],
      requests: [],
      old,
    };
    let previous: string | null = null;
    for (let turn = 0; turn < PER_CONVERSATION; turn++) {
      const time = start + turn * step;
      const createdAt = new Date(time).toISOString();
      const id = newId("call", time);
      const offset = (index * 31 + turn * 7) % 300;
      const request = Buffer.from(
        `{"model":"claude-bench","max_tokens":1024,"messages":[{"role":"user","content":"conversation ${index} turn ${turn}: ${FILLER.slice(offset, offset + 160)}"}]}`,
      );
      const response = Buffer.from(
        `{"id":"msg_${index}_${turn}","type":"message","role":"assistant","model":"claude-bench","content":[{"type":"text","text":"answer ${turn}"}],"stop_reason":"end_turn","usage":{"input_tokens":${40 + turn},"output_tokens":5}}`,
      );
      piece++;
      const bytes = Buffer.concat([request, response]);
      batch.pieces.push({
        id: piece,
        subject_uid: subject,
        size: bytes.length,
        bytes,
        created_at: createdAt,
      });
      batch.calls.push({
        id,
        subject_uid: subject,
        conversation_id: conversationId,
        tip_prefix_sha256: createHash("sha256").update(id).digest("hex"),
        message_count: turn * 2 + 1,
        matched_count: turn === 0 ? 0 : turn * 2 - 1,
        previous_call_id: previous,
        input_tokens: 40 + turn,
        output_tokens: 5,
        duration_ms: 800 + (turn % 50),
        created_at: createdAt,
        request_manifest: encodeManifest({
          kind: "flat",
          length: request.length,
          ranges: [{ piece, offset: 0, length: request.length }],
        }),
        response_manifest: encodeManifest({
          kind: "flat",
          length: response.length,
          ranges: [{ piece, offset: request.length, length: response.length }],
        }),
        request_size: request.length,
        response_size: response.length,
      });
      batch.requests.push(request);
      previous = id;
    }
    yield batch;
  }
}

/** The chunk index's rows of a piece (`--chunks`): hashes as the store writes them, 16 bytes. */
function chunkRows(piece: PieceRow): { hash: Buffer; offset: number }[] {
  return Array.from({ length: CHUNKS }, (_, index) => ({
    hash: createHash("sha256")
      .update(`${piece.subject_uid}:${piece.id}:${index}`)
      .digest()
      .subarray(0, 16),
    offset: Math.floor((piece.size * index) / Math.max(1, CHUNKS)),
  }));
}

/** Calls of kept conversations the load client reads back (one per kept conversation, up to 200). */
interface KeptCall {
  readonly id: string;
  readonly request: Buffer;
}

function keepSample(batch: Batch, sample: KeptCall[]): void {
  if (batch.old || sample.length >= 200) return;
  const turn = (sample.length * 37) % PER_CONVERSATION;
  sample.push({
    id: (batch.calls[turn] as CallRow).id,
    request: batch.requests[turn] as Buffer,
  });
}

// ---------------------------------------------------------------------------------------------
// Stores

interface Counts {
  readonly calls: number;
  readonly pieces: number;
  readonly chunks: number;
  readonly conversations: number;
}

interface Store {
  readonly name: "sqlite" | "postgres";
  readonly calls: number;
  /** The CLI's and the server's --db. */
  readonly db: string;
  readonly location: DatabaseLocation;
  seedMs: number;
  readonly sample: KeptCall[];
  /** Calls, pieces and conversations the store holds. */
  counts(): Promise<Counts>;
  drop(): Promise<void>;
}

async function migrated(location: DatabaseLocation): Promise<void> {
  const database = await openDatabase(location, { poolSize: 1 });
  try {
    await migrateDatabase(database);
  } finally {
    await database.close();
  }
}

async function sqliteStore(folder: string, calls: number): Promise<Store> {
  const path = join(folder, `prune-${calls}.sqlite`);
  const location = { dialect: "sqlite" as const, path };
  const seedStart = performance.now();
  await migrated(location);
  const database = new Database(path);
  database.pragma("synchronous = OFF");
  database.pragma("cache_size = -1048576");
  const insertConversation = database.prepare(
    "insert into ai_gateway_conversations (id, subject_uid, created_at, metadata) values (?, ?, ?, '{}')",
  );
  const insertCall = database.prepare(
    `insert into ai_gateway_recorded_calls (id, subject_uid, conversation_id, wire_format, path, model,
       tip_prefix_sha256, message_count, matched_count, previous_call_id, status_code, request_headers,
       request_body, response_headers, response_body_base64, redacted, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, duration_ms, created_at, body_storage, request_manifest,
       request_base_call_id, response_manifest, request_size, response_size)
     values (?, ?, ?, 'anthropic-messages', '/v1/messages', 'claude-bench', ?, ?, ?, ?, 200, ?, '', ?, '',
       0, ?, ?, null, null, ?, ?, 1, ?, null, ?, ?, ?)`,
  );
  const insertPiece = database.prepare(
    "insert into ai_gateway_body_pieces (id, subject_uid, codec, size, bytes, created_at) values (?, ?, 0, ?, ?, ?)",
  );
  const insertChunk = database.prepare(
    "insert into ai_gateway_body_chunks (subject_uid, hash, piece_id, piece_offset) values (?, ?, ?, ?)",
  );
  const write = database.transaction((batches: Batch[]) => {
    for (const batch of batches) {
      const c = batch.conversation;
      insertConversation.run(c.id, c.subject_uid, c.created_at);
      for (const p of batch.pieces) {
        insertPiece.run(p.id, p.subject_uid, p.size, p.bytes, p.created_at);
        for (const chunk of chunkRows(p)) {
          insertChunk.run(p.subject_uid, chunk.hash, p.id, chunk.offset);
        }
      }
      for (const r of batch.calls) {
        insertCall.run(
          r.id,
          r.subject_uid,
          r.conversation_id,
          r.tip_prefix_sha256,
          r.message_count,
          r.matched_count,
          r.previous_call_id,
          REQUEST_HEADERS,
          RESPONSE_HEADERS,
          r.input_tokens,
          r.output_tokens,
          r.duration_ms,
          r.created_at,
          r.request_manifest,
          r.response_manifest,
          r.request_size,
          r.response_size,
        );
      }
    }
  });
  const sample: KeptCall[] = [];
  let pending: Batch[] = [];
  let done = 0;
  for (const batch of storeRows(calls)) {
    keepSample(batch, sample);
    pending.push(batch);
    if (pending.length === 100) {
      write(pending);
      done += pending.length * PER_CONVERSATION;
      pending = [];
      if (done % 100_000 === 0) log(`sqlite: ${count(done)} of ${count(calls)} calls seeded`);
    }
  }
  write(pending);
  database.pragma("wal_checkpoint(TRUNCATE)");
  database.close();
  const seedMs = performance.now() - seedStart;
  return {
    name: "sqlite",
    calls,
    db: path,
    location,
    seedMs,
    sample,
    async counts() {
      const reader = new Database(path, { readonly: true, fileMustExist: true });
      try {
        const one = (table: string) =>
          Number((reader.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n);
        return {
          calls: one("ai_gateway_recorded_calls"),
          pieces: one("ai_gateway_body_pieces"),
          chunks: one("ai_gateway_body_chunks"),
          conversations: one("ai_gateway_conversations"),
        };
      } finally {
        reader.close();
      }
    },
    async drop() {
      rmSync(path, { force: true });
      rmSync(`${path}-wal`, { force: true });
      rmSync(`${path}-shm`, { force: true });
    },
  };
}

async function postgresStore(calls: number): Promise<Store> {
  const name = `verbatim_bench_prune_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const location = { dialect: "postgres" as const, url: url.toString() };
  const client = new pg.Client({ connectionString: url.toString() });
  const drop = async () => {
    await client.end().catch(() => undefined);
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  try {
    const seedStart = performance.now();
    await migrated(location);
    await client.connect();
    const sample: KeptCall[] = [];
    let pending: Batch[] = [];
    let done = 0;
    const write = async (batches: Batch[]) => {
      const conversations = batches.map((batch) => batch.conversation);
      const rows = batches.flatMap((batch) => batch.calls);
      const pieces = batches.flatMap((batch) => batch.pieces);
      await client.query("begin");
      await client.query(
        `insert into ai_gateway_conversations (id, subject_uid, created_at, metadata)
         select id, subject_uid, created_at, '{}' from unnest($1::text[], $2::text[], $3::text[])
           as t(id, subject_uid, created_at)`,
        [
          conversations.map((c) => c.id),
          conversations.map((c) => c.subject_uid),
          conversations.map((c) => c.created_at),
        ],
      );
      await client.query(
        `insert into ai_gateway_body_pieces (subject_uid, id, codec, size, bytes, created_at)
         select subject_uid, id, 0, size, bytes, created_at
           from unnest($1::text[], $2::bigint[], $3::int[], $4::bytea[], $5::text[])
             as t(subject_uid, id, size, bytes, created_at)`,
        [
          pieces.map((p) => p.subject_uid),
          pieces.map((p) => p.id),
          pieces.map((p) => p.size),
          pieces.map((p) => p.bytes),
          pieces.map((p) => p.created_at),
        ],
      );
      if (CHUNKS > 0) {
        const chunks = pieces.flatMap((p) =>
          chunkRows(p).map((chunk) => ({ subject: p.subject_uid, piece: p.id, ...chunk })),
        );
        await client.query(
          `insert into ai_gateway_body_chunks (subject_uid, hash, piece_id, piece_offset)
           select * from unnest($1::text[], $2::bytea[], $3::bigint[], $4::int[])`,
          [
            chunks.map((c) => c.subject),
            chunks.map((c) => c.hash),
            chunks.map((c) => c.piece),
            chunks.map((c) => c.offset),
          ],
        );
      }
      await client.query(
        `insert into ai_gateway_recorded_calls (id, subject_uid, conversation_id, wire_format, path,
           model, tip_prefix_sha256, message_count, matched_count, previous_call_id, status_code,
           request_headers, request_body, response_headers, response_body_base64, redacted,
           input_tokens, output_tokens, duration_ms, created_at, body_storage, request_manifest,
           response_manifest, request_size, response_size)
         select id, subject_uid, conversation_id, 'anthropic-messages', '/v1/messages',
           'claude-bench', tip, message_count, matched_count, previous_call_id, 200, $13::json,
           '', $14::json, '', 0, input_tokens, output_tokens, duration_ms, created_at, 1,
           request_manifest, response_manifest, request_size, response_size
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[],
           $7::text[], $8::int[], $9::int[], $10::text[], $11::bytea[], $12::bytea[],
           $15::int[], $16::int[], $17::int[])
           as t(id, subject_uid, conversation_id, tip, message_count, matched_count,
             previous_call_id, input_tokens, output_tokens, created_at, request_manifest,
             response_manifest, request_size, response_size, duration_ms)`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.subject_uid),
          rows.map((r) => r.conversation_id),
          rows.map((r) => r.tip_prefix_sha256),
          rows.map((r) => r.message_count),
          rows.map((r) => r.matched_count),
          rows.map((r) => r.previous_call_id),
          rows.map((r) => r.input_tokens),
          rows.map((r) => r.output_tokens),
          rows.map((r) => r.created_at),
          rows.map((r) => r.request_manifest),
          rows.map((r) => r.response_manifest),
          REQUEST_HEADERS,
          RESPONSE_HEADERS,
          rows.map((r) => r.request_size),
          rows.map((r) => r.response_size),
          rows.map((r) => r.duration_ms),
        ],
      );
      await client.query("commit");
    };
    for (const batch of storeRows(calls)) {
      keepSample(batch, sample);
      pending.push(batch);
      if (pending.length === 50) {
        await write(pending);
        done += pending.length * PER_CONVERSATION;
        pending = [];
        if (done % 100_000 === 0) log(`postgres: ${count(done)} of ${count(calls)} calls seeded`);
      }
    }
    if (pending.length > 0) await write(pending);
    await client.query("select setval('ai_gateway_body_piece_ids', $1)", [calls]);
    // A store that grew to this size has planner statistics (autovacuum's analyze).
    await client.query("analyze");
    const seedMs = performance.now() - seedStart;
    return {
      name: "postgres",
      calls,
      db: url.toString(),
      location,
      seedMs,
      sample,
      async counts() {
        const one = async (table: string) =>
          Number((await client.query(`select count(*)::int as n from ${table}`)).rows[0]?.n);
        return {
          calls: await one("ai_gateway_recorded_calls"),
          pieces: await one("ai_gateway_body_pieces"),
          chunks: await one("ai_gateway_body_chunks"),
          conversations: await one("ai_gateway_conversations"),
        };
      },
      drop,
    };
  } catch (error) {
    await drop();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// The server and its load

function serve(
  db: string,
  env: Record<string, string> = {},
  onOutput?: (text: string) => void,
): Promise<{ process: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["bin/verbatim.js", "serve", "--db", db, "--port", "0"], {
    cwd: root,
    env: {
      ...process.env,
      VERBATIM_LOG_LEVEL: "error",
      ...env,
      VERBATIM_OPERATOR_TOKEN: OPERATOR,
      VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
      ANTHROPIC_API_KEY: "sk-ant-bench",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
    },
    // The log (stderr) is read only when someone listens to it.
    stdio: ["ignore", "pipe", onOutput === undefined ? "inherit" : "pipe"],
  });
  child.stderr?.on("data", (chunk: Buffer) => onOutput?.(chunk.toString()));
  let out = "";
  return new Promise((resolve, reject) => {
    let listening = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      if (listening) return;
      out += text;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url !== undefined) {
        listening = true;
        resolve({ process: child, url });
      }
    });
    child.on("exit", (code) => reject(new Error(`verbatim serve exited ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners("exit");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      url,
      { method: "GET", headers: { authorization: `Bearer ${OPERATOR}` }, agent, timeout: 60_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }),
        );
        response.on("error", reject);
      },
    );
    call.on("timeout", () => call.destroy(new Error("no answer in 60 s")));
    call.on("error", reject);
    call.end();
  });
}

type Phase = "warm-up" | "before" | "during" | "after";

/** Sequential requests to the server, timed per phase, until stopped. */
class Load {
  phase: Phase;
  readonly list = new Map<Phase, number[]>();
  readonly body = new Map<Phase, number[]>();
  readonly failures: string[] = [];
  #running = true;
  readonly #done: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly sample: readonly KeptCall[],
    /** Conversations a list must show at least: the page, or all the kept ones if fewer. */
    private readonly listed: number,
    phase: Phase = "warm-up",
  ) {
    this.phase = phase;
    this.#done = this.#run();
  }

  async #time(
    samples: Map<Phase, number[]>,
    path: string,
    check: (body: Buffer) => string | undefined,
  ): Promise<void> {
    const phase = this.phase;
    const start = performance.now();
    try {
      const answer = await get(`${this.url}${path}`);
      const elapsed = performance.now() - start;
      const wrong = answer.status === 200 ? check(answer.body) : `status ${answer.status}`;
      if (wrong !== undefined) {
        this.failures.push(
          `${phase} GET ${path}: ${wrong} ${answer.body.toString().slice(0, 200)}`,
        );
        return;
      }
      const list = samples.get(phase) ?? [];
      list.push(elapsed);
      samples.set(phase, list);
    } catch (error) {
      this.failures.push(`${phase} GET ${path}: ${String(error)}`);
    }
  }

  async #run(): Promise<void> {
    for (let index = 0; this.#running; index++) {
      await this.#time(this.list, "/ai-gateway/conversations?limit=20", (body) => {
        const data = (JSON.parse(body.toString()) as { data?: unknown[] }).data;
        return (data?.length ?? 0) >= this.listed
          ? undefined
          : `${data?.length} conversations listed, not ${this.listed}`;
      });
      const call = this.sample[index % this.sample.length] as KeptCall;
      await this.#time(this.body, `/ai-gateway/recorded-calls/${call.id}/request`, (body) =>
        body.equals(call.request) ? undefined : "the request's bytes differ from those seeded",
      );
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#done;
  }

  requests(phase: Phase): number {
    return (this.list.get(phase)?.length ?? 0) + (this.body.get(phase)?.length ?? 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The prune, its memory

/**
 * Loaded into the prune's process: at exit it writes to fd 3 its VmHWM (kB), CPU time (µs), and
 * RSS, V8 heap committed and used, and external memory (bytes) as they are then. (A timer in the
 * process would not do: on SQLite the prune's queries answer at once, and its chain of awaits
 * never gives the event loop a turn.)
 */
const HWM_HOOK = `data:text/javascript,${encodeURIComponent(
  'import{readFileSync,writeSync}from"node:fs";process.on("exit",()=>{try{const u=process.cpuUsage(),m=process.memoryUsage();writeSync(3,[/^VmHWM:\\s+(\\d+) kB$/m.exec(readFileSync("/proc/self/status","utf8"))?.[1]??"0",u.user+u.system,m.rss,m.heapTotal,m.heapUsed,m.external].join(" ")+"\\n")}catch{}});',
)}`;

interface PruneRun {
  readonly code: number | null;
  readonly wallMs: number;
  readonly report: Record<string, unknown> | undefined;
  /** The largest VmRSS and VmHWM sampled every 50 ms, and VmHWM at exit, kB. */
  readonly sampledKb: number;
  /** The largest anonymous, file-backed and shared parts of the RSS sampled, kB. */
  readonly sampledPartsKb: { readonly anon: number; readonly file: number; readonly shmem: number };
  readonly hwmAtExitKb: number;
  readonly peakKb: number;
  /** User + system CPU time of the process, ms. */
  readonly cpuMs: number;
  /** At exit: RSS, V8 heap committed and used, external memory (Buffers), kB. */
  readonly atExitKb: {
    readonly rss: number;
    readonly heapTotal: number;
    readonly heapUsed: number;
    readonly external: number;
  };
  readonly stderr: string;
}

function statusKb(
  field: "VmRSS" | "VmHWM" | "RssAnon" | "RssFile" | "RssShmem",
  status: string,
): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? 0);
}

async function prune(db: string, before: string): Promise<PruneRun> {
  const start = performance.now();
  const child = spawn(
    process.execPath,
    [
      "--import",
      HWM_HOOK,
      "bin/verbatim.js",
      "db",
      "prune",
      "--before",
      before,
      "--db",
      db,
      "--json",
    ],
    { cwd: root, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  let hwm = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  (child.stdio[3] as NodeJS.ReadableStream | null)?.on("data", (chunk: Buffer) => {
    hwm += chunk.toString();
  });
  let sampled = 0;
  const parts = { anon: 0, file: 0, shmem: 0 };
  const pid = child.pid as number;
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      sampled = Math.max(sampled, statusKb("VmRSS", status), statusKb("VmHWM", status));
      parts.anon = Math.max(parts.anon, statusKb("RssAnon", status));
      parts.file = Math.max(parts.file, statusKb("RssFile", status));
      parts.shmem = Math.max(parts.shmem, statusKb("RssShmem", status));
    } catch {
      // Gone between two samples.
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearInterval(timer);
  const wallMs = performance.now() - start;
  let report: Record<string, unknown> | undefined;
  try {
    report = JSON.parse(out.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
  } catch {
    report = undefined;
  }
  const [hwmText, cpuText, ...atExit] = hwm.trim().split(" ");
  const [rssAtExit, heapTotal, heapUsed, external] = atExit.map((text) => Number(text) / 1024);
  const hwmAtExitKb = Number(hwmText) || 0;
  return {
    code,
    wallMs,
    report,
    sampledKb: sampled,
    sampledPartsKb: parts,
    hwmAtExitKb,
    peakKb: Math.max(sampled, hwmAtExitKb),
    cpuMs: Number(cpuText) / 1000,
    atExitKb: {
      rss: rssAtExit ?? 0,
      heapTotal: heapTotal ?? 0,
      heapUsed: heapUsed ?? 0,
      external: external ?? 0,
    },
    stderr: err,
  };
}

// ---------------------------------------------------------------------------------------------
// One store: serve, load, prune

interface Result {
  readonly store: Store;
  readonly floor: PruneRun;
  readonly run: PruneRun;
  readonly load: Load;
  readonly left: Counts;
}

async function measure(store: Store): Promise<Result> {
  const label = `${store.name}, ${count(store.calls)} calls`;
  log(`${label}: the floor (a prune that removes nothing)`);
  const floor = await prune(store.db, "2000-01-01T00:00:00Z");
  if (floor.code !== 0)
    throw new Error(`${label}: the no-op prune exited ${floor.code}: ${floor.stderr}`);
  const server = await serve(store.db);
  const load = new Load(server.url, store.sample, Math.min(20, store.calls / PER_CONVERSATION / 2));
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    load.phase = "before";
    log(`${label}: baseline window, ${secs(BASELINE_MS)}`);
    await new Promise((resolve) => setTimeout(resolve, BASELINE_MS));
    load.phase = "during";
    log(`${label}: verbatim db prune --before ${BEFORE}`);
    const run = await prune(store.db, BEFORE);
    load.phase = "after";
    log(
      `${label}: prune exited ${run.code} after ${secs(run.wallMs)}, peak RSS ${mib(run.peakKb)}; ` +
        `${load.requests("during")} requests answered meanwhile, ${load.failures.length} failed`,
    );
    if (run.code !== 0) log(`${label}: prune's stderr: ${run.stderr.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await load.stop();
    await stop(server.process);
    const left = await store.counts();
    return { store, floor, run, load, left };
  } finally {
    await load.stop();
    await stop(server.process);
  }
}

/**
 * The server's own rolling retention (VERBATIM_RETENTION_DAYS, docs/server/retention.md): the
 * same prune run by `verbatim serve` itself, at start, in its process, while the load client
 * requests. Its end is the info line it logs.
 */
interface RollingResult {
  readonly store: Store;
  readonly days: number;
  /** From "listening" to the retention's log line, ms. */
  readonly pruneMs: number;
  readonly load: Load;
  readonly report: Record<string, unknown> | undefined;
}

async function rolling(store: Store): Promise<RollingResult | string> {
  // A cutoff between the old half (2025) and the new one (2026-11): 2026-06-01.
  const days = Math.round((Date.now() - Date.UTC(2026, 5, 1)) / 86_400_000);
  if (days < 1 || Date.now() - days * 86_400_000 >= NEW_FROM) {
    return "skipped: the clock is too early or too late for a cutoff between the two halves";
  }
  const label = `${store.name}, ${count(store.calls)} calls, the server's rolling retention`;
  let report: Record<string, unknown> | undefined;
  let tail = "";
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const onOutput = (text: string) => {
    const lines = (tail + text).split("\n");
    tail = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.includes('"retention":{')) continue;
      report = (JSON.parse(line) as { retention?: Record<string, unknown> }).retention;
      done();
    }
  };
  log(`${label}: VERBATIM_RETENTION_DAYS=${days}`);
  const start = performance.now();
  const server = await serve(
    store.db,
    { VERBATIM_RETENTION_DAYS: String(days), VERBATIM_LOG_LEVEL: "info" },
    onOutput,
  );
  const load = new Load(
    server.url,
    store.sample,
    Math.min(20, store.calls / PER_CONVERSATION / 2),
    "during",
  );
  try {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 30 * 60 * 1000).unref());
    await Promise.race([finished, timeout]);
    const pruneMs = performance.now() - start;
    load.phase = "after";
    log(
      `${label}: ${report === undefined ? "no report in 30 min" : `logged after ${secs(pruneMs)}`}; ` +
        `${load.requests("during")} requests answered meanwhile, ${load.failures.length} failed`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { store, days, pruneMs, load, report };
  } finally {
    await load.stop();
    await stop(server.process);
  }
}

function rollingLine(name: string, result: RollingResult | string): string {
  if (typeof result === "string") return `\n${name}, the server's rolling retention: ${result}\n`;
  const { load, report } = result;
  const during = [...(load.list.get("during") ?? []), ...(load.body.get("during") ?? [])];
  const slowest = during.reduce((a, b) => Math.max(a, b), 0);
  return (
    `\n${name}, the server's own rolling retention (VERBATIM_RETENTION_DAYS=${result.days}) on a fresh ` +
    `store of ${count(result.store.calls)} calls: ${count(Number(report?.["recorded_calls"]))} calls and ` +
    `${count(Number(report?.["pieces"]))} pieces removed, logged ${secs(result.pruneMs)} after "listening"; ` +
    `meanwhile the load client got ${count(during.length)} answers, p50 ${ms2(percentile(during, 0.5))} ms, ` +
    `slowest ${ms2(slowest)} ms (a request waits as long as the server's event loop is held), ` +
    `${load.failures.length} failed\n`
  );
}

// ---------------------------------------------------------------------------------------------
// Where the time goes (--phases): the prune in process, every query timed by kind

interface TableRef {
  readonly table?: { readonly identifier?: { readonly name?: string } };
  readonly node?: TableRef;
}

interface QueryNode {
  readonly kind: string;
  /** RawNode (sql`…`: begin, commit, pragmas). */
  readonly sqlFragments?: readonly string[];
  readonly from?: { readonly froms?: readonly TableRef[] };
  readonly table?: TableRef;
  readonly selections?: readonly unknown[];
  readonly limit?: unknown;
  readonly where?: unknown;
}

function tableOf(ref: TableRef | undefined): string | undefined {
  return ref?.table?.identifier?.name ?? ref?.node?.table?.identifier?.name;
}

function queryKind(node: QueryNode): string {
  if (node.kind === "RawNode") return `sql: ${(node.sqlFragments ?? []).join("?").slice(0, 40)}`;
  const from = tableOf(node.from?.froms?.[0]) ?? tableOf(node.table) ?? "?";
  const verb = node.kind.replace(/QueryNode$|Node$/, "").toLowerCase();
  const shape =
    node.kind === "SelectQueryNode"
      ? ` (${node.selections?.length ?? 0} column(s)${node.limit === undefined ? "" : ", paged"})`
      : "";
  const where = JSON.stringify(node.where ?? "");
  const hints = ["created_at", "conversation_id", "request_base_call_id", "piece_id"]
    .filter((column) => where.includes(`"${column}"`))
    .join(", ");
  return `${verb} ${from}${shape}${hints === "" ? "" : ` by ${hints}`}`;
}

class QueryTimes implements KyselyPlugin {
  readonly #started = new Map<unknown, { kind: string; at: number }>();
  readonly totals = new Map<string, { count: number; ms: number; rows: number }>();
  /** The sweep of pieces has begun (its first query read the pieces table). */
  sweeping = false;
  /** Called every 200 results (timers may never run: see `phases`). */
  onEvery200: () => void = () => undefined;
  #results = 0;
  transformQuery(args: PluginTransformQueryArgs) {
    const kind = queryKind(args.node as unknown as QueryNode);
    if (kind.startsWith("select ai_gateway_body_pieces")) this.sweeping = true;
    this.#started.set(args.queryId, { kind, at: performance.now() });
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs) {
    const started = this.#started.get(args.queryId);
    if (started !== undefined) {
      this.#started.delete(args.queryId);
      const total = this.totals.get(started.kind) ?? { count: 0, ms: 0, rows: 0 };
      total.count++;
      total.ms += performance.now() - started.at;
      total.rows += args.result.rows.length;
      this.totals.set(started.kind, total);
    }
    if (++this.#results % 200 === 0) this.onEvery200();
    return args.result;
  }
}

async function phases(path: string, calls: number): Promise<string> {
  log(`phases: pruning a copy of the ${count(calls)}-call store in process`);
  const opened = await openDatabase({ dialect: "sqlite", path }, { poolSize: 1 });
  const times = new QueryTimes();
  const database: StoreDatabase = { ...opened, db: opened.db.withPlugin(times) };
  const conversations = calls / PER_CONVERSATION / 2;
  const tenths: number[] = [];
  let lastConversation = 0;
  /** The process's memory, at most, while conversations go and while pieces are swept, MiB. */
  const memory = {
    conversations: { rss: 0, heapUsed: 0, external: 0 },
    sweep: { rss: 0, heapUsed: 0, external: 0 },
  };
  const sample = () => {
    const usage = process.memoryUsage();
    const peak = memory[times.sweeping ? "sweep" : "conversations"];
    peak.rss = Math.max(peak.rss, usage.rss / 1024 / 1024);
    peak.heapUsed = Math.max(peak.heapUsed, usage.heapUsed / 1024 / 1024);
    peak.external = Math.max(peak.external, usage.external / 1024 / 1024);
  };
  times.onEvery200 = sample;
  // How often the event loop turned meanwhile: a timer every 10 ms, and the longest gap between
  // two of its runs (better-sqlite3 answers at once, so a chain of awaited queries may never
  // give the event loop a turn; the server's rolling retention runs on the server's loop).
  let turns = 0;
  let lastTurn = 0;
  let longestGap = 0;
  try {
    await migrateDatabase(opened);
    const before = process.memoryUsage();
    const start = performance.now();
    lastTurn = start;
    const timer = setInterval(() => {
      const now = performance.now();
      turns++;
      longestGap = Math.max(longestGap, now - lastTurn);
      lastTurn = now;
    }, 10);
    const report = await pruneStore(database, {
      before: BEFORE,
      onProgress: (done) => {
        lastConversation = performance.now();
        if (done.conversations % Math.max(1, Math.floor(conversations / 10)) === 0) {
          tenths.push(lastConversation - start);
        }
      },
    });
    const total = performance.now() - start;
    longestGap = Math.max(longestGap, performance.now() - lastTurn);
    clearInterval(timer);
    sample();
    const peaks = (stage: "conversations" | "sweep") =>
      `RSS ${memory[stage].rss.toFixed(0)}, heap used ${memory[stage].heapUsed.toFixed(0)}, external ${memory[stage].external.toFixed(0)}`;
    const paces = tenths.map((at, index) => at - (tenths[index - 1] ?? 0));
    const lines = [
      `\nWhere the time goes: the ${count(calls)}-call SQLite store's copy pruned in process (pruneStore), ${secs(total)} in all: ` +
        `${count(report.conversations)} conversations deleted in ${secs(lastConversation - start)} ` +
        `(each tenth: ${paces.map((pace) => (pace / 1000).toFixed(1)).join(", ")} s), then unplaced calls, idempotency keys and ` +
        `the sweep of ${count(report.pieces)} pieces in ${secs(total - (lastConversation - start))}. ` +
        `Memory of this process at most, MiB (before: RSS ${(before.rss / 1024 / 1024).toFixed(0)}, heap used ${(before.heapUsed / 1024 / 1024).toFixed(0)}): ` +
        `deleting conversations ${peaks("conversations")}; sweeping ${peaks("sweep")}. ` +
        `The event loop turned ${count(turns)} time(s) meanwhile (a 10 ms timer), the longest wait for a turn ${secs(longestGap)}. Queries by kind:\n`,
      "| query | count | rows | total s | mean ms |",
      "| --- | --- | --- | --- | --- |",
      ...[...times.totals.entries()]
        .sort((a, b) => b[1].ms - a[1].ms)
        .map(
          ([kind, total]) =>
            `| ${kind} | ${count(total.count)} | ${count(total.rows)} | ${(total.ms / 1000).toFixed(2)} | ${(total.ms / total.count).toFixed(3)} |`,
        ),
    ];
    return `${lines.join("\n")}\n`;
  } finally {
    await opened.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Main

interface Outcome {
  readonly name: string;
  readonly small: Result;
  readonly large: Result;
  readonly rolling: RollingResult | string;
}

function row(result: Result): string {
  const { store, floor, run, load } = result;
  const report = run.report ?? {};
  const listBefore = load.list.get("before") ?? [];
  const listDuring = load.list.get("during") ?? [];
  const bodyBefore = load.body.get("before") ?? [];
  const bodyDuring = load.body.get("during") ?? [];
  const pair = (samples: number[]) =>
    `${ms2(percentile(samples, 0.5))} / ${ms2(percentile(samples, 0.99))}`;
  return (
    `| ${store.name} | ${count(store.calls)} | ${secs(store.seedMs)} | ${run.code} | ${secs(run.wallMs)} (CPU ${secs(run.cpuMs)}) | ` +
    `${count(Number(report["conversations"]))} | ${count(Number(report["recorded_calls"]))} | ` +
    `${count(Number(report["pieces"]))} (${(Number(report["piece_bytes"]) / 1024 / 1024).toFixed(1)} MiB) | ` +
    `${mib(run.peakKb)} (sampled ${mib(run.sampledKb)}: anonymous ${mib(run.sampledPartsKb.anon)}, file ${mib(run.sampledPartsKb.file)}, shared ${mib(run.sampledPartsKb.shmem)}) | ` +
    `${mib(run.atExitKb.rss)}: heap ${mib(run.atExitKb.heapTotal)} (used ${mib(run.atExitKb.heapUsed)}), external ${mib(run.atExitKb.external)}, rest ${mib(run.atExitKb.rss - run.atExitKb.heapTotal - run.atExitKb.external)} | ` +
    `${mib(floor.peakKb)} (at exit: heap ${mib(floor.atExitKb.heapTotal)}, rest ${mib(floor.atExitKb.rss - floor.atExitKb.heapTotal - floor.atExitKb.external)}) | ` +
    `${pair(listBefore)} | ${pair(listDuring)} | ${pair(bodyBefore)} | ${pair(bodyDuring)} | ` +
    `${ms2([...listDuring, ...bodyDuring].reduce((a, b) => Math.max(a, b), 0))} | ${load.requests("during")} | ${load.failures.length} | ` +
    `${count(result.left.calls)} / ${count(result.left.pieces)} |`
  );
}

function goals(outcome: Outcome): string {
  const { small, large } = outcome;
  const n = large.store.calls;
  const report = large.run.report ?? {};
  const completes = large.run.code === 0 && Number(report["recorded_calls"]) === n / 2;
  const piecesFreed =
    Number(report["pieces"]) === n / 2 &&
    large.left.pieces === n / 2 &&
    large.left.chunks === (n / 2) * CHUNKS;
  const ratio = large.run.peakKb / small.run.peakKb;
  const growth =
    (large.run.peakKb - large.floor.peakKb) / Math.max(1, small.run.peakKb - small.floor.peakKb);
  const failures = small.load.failures.length + large.load.failures.length;
  const p = (result: Result, which: "list" | "body", fraction: number) =>
    percentile(result.load[which].get("during") ?? [], fraction) /
    percentile(result.load[which].get("before") ?? [], fraction);
  const lines = [
    `\n${outcome.name}:`,
    `${mark(completes)} prune of ${count(n)} calls completes (exit ${large.run.code}, ${count(Number(report["recorded_calls"]))} calls removed, ${count(n / 2)} expected) in ${secs(large.run.wallMs)}`,
    `${mark(piecesFreed)} every unused piece freed (${count(Number(report["pieces"]))} freed, ${count(large.left.pieces)} left, ${count(n / 2)} each expected${CHUNKS > 0 ? `; ${count(large.left.chunks)} rows of the chunk index left, ${count((n / 2) * CHUNKS)} expected` : ""})`,
    `${mark(ratio <= 1.5)} peak RSS at ${count(n)} ≤ 1.5× peak RSS at ${count(small.store.calls)}: ${mib(large.run.peakKb)} / ${mib(small.run.peakKb)} = ${ratio.toFixed(2)}× ` +
      `(above the floor of a prune that removes nothing: ${mib(large.run.peakKb - large.floor.peakKb)} / ${mib(small.run.peakKb - small.floor.peakKb)}` +
      `${small.run.peakKb - small.floor.peakKb >= 4096 ? ` = ${growth.toFixed(2)}×` : ""})`,
    `${mark(failures === 0)} server answered throughout (0 failures): ${failures} failed of ${large.load.requests("during") + small.load.requests("during")} requests during the prunes`,
    `  latency during / before at ${count(n)} calls: conversation list p50 ${p(large, "list", 0.5).toFixed(2)}×, p99 ${p(large, "list", 0.99).toFixed(2)}×; ` +
      `request body p50 ${p(large, "body", 0.5).toFixed(2)}×, p99 ${p(large, "body", 0.99).toFixed(2)}×`,
  ];
  for (const failure of [...small.load.failures, ...large.load.failures].slice(0, 5)) {
    lines.push(`  failure: ${failure}`);
  }
  return `${lines.join("\n")}\n`;
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-prune-"));
const outcomes: Outcome[] = [];
let phaseText = "";
const loadBefore = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
try {
  // tsx compiles the command's sources on their first run (and caches them): a first prune of an
  // empty store, not measured, so that every measured one starts alike.
  const empty = join(folder, "empty.sqlite");
  await migrated({ dialect: "sqlite", path: empty });
  log("warming up: a prune of an empty store");
  await prune(empty, BEFORE);
  const databases: ("sqlite" | "postgres")[] = values.pg ? ["sqlite", "postgres"] : ["sqlite"];
  for (const name of databases) {
    const results: Result[] = [];
    for (const calls of [SMALL, CALLS]) {
      log(
        `${name}: seeding ${count(calls)} calls (${count(calls / PER_CONVERSATION)} conversations)`,
      );
      const store =
        name === "sqlite" ? await sqliteStore(folder, calls) : await postgresStore(calls);
      log(`${name}: seeded ${count(calls)} calls in ${secs(store.seedMs)}`);
      let copy: string | undefined;
      try {
        if (values.phases && name === "sqlite" && calls === CALLS) {
          copy = join(folder, "phases.sqlite");
          copyFileSync(store.db, copy);
        }
        results.push(await measure(store));
      } finally {
        await store.drop();
      }
      if (copy !== undefined) {
        phaseText = await phases(copy, calls);
        rmSync(copy, { force: true });
        rmSync(`${copy}-wal`, { force: true });
        rmSync(`${copy}-shm`, { force: true });
      }
    }
    log(`${name}: seeding ${count(SMALL)} calls for the server's rolling retention`);
    const fresh = name === "sqlite" ? await sqliteStore(folder, SMALL) : await postgresStore(SMALL);
    let rolled: RollingResult | string;
    try {
      rolled = await rolling(fresh);
    } finally {
      await fresh.drop();
    }
    outcomes.push({
      name,
      small: results[0] as Result,
      large: results[1] as Result,
      rolling: rolled,
    });
  }
} finally {
  agent.destroy();
  rmSync(folder, { recursive: true, force: true });
}

const loadAfter = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
process.stdout.write(
  outcomes.map((outcome) => goals(outcome) + rollingLine(outcome.name, outcome.rolling)).join(""),
);
process.stdout.write(
  `\nPrune (verbatim db prune --before ${BEFORE} --json, a child process) beside verbatim serve, ` +
    `stores of conversations of ${PER_CONVERSATION} calls, ${SUBJECTS} subjects, one ~430-byte piece a call${CHUNKS > 0 ? ` with ${CHUNKS} row(s) of the chunk index` : ""}, half before the cutoff; ` +
    `server latencies of GET /ai-gateway/conversations?limit=20 (list) and GET /ai-gateway/recorded-calls/:id/request ` +
    `(body), sequential, p50 / p99 ms (load average before: ${loadBefore}, after: ${loadAfter}):\n\n` +
    "| database | calls | seeding | prune exit | prune wall time (its CPU time) | conversations removed | calls removed | pieces freed | prune peak RSS (sampled parts at most) | its RSS at exit: V8 heap committed (used), external, rest (native: SQLite, malloc, code) | floor (no-op prune) peak RSS | list before | list during | body before | body during | slowest during (ms) | requests during | failed | calls / pieces left |\n" +
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
    outcomes.flatMap((outcome) => [row(outcome.small), row(outcome.large)]).join("\n") +
    `\n\nCommand: node bin/run-ts.js bench/server/prune-scale.ts ${process.argv.slice(2).join(" ")}\n`,
);
process.stdout.write(phaseText);
