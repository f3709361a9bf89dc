// Recorded calls (docs/server/recorded-calls.md, "Recorded calls"), two goals of issue 18:
// 1. Matching a request of 1,000 messages against a store of 100,000 recorded conversations:
//    hashing the messages plus one indexed lookup, p50 under 2 ms on SQLite and PostgreSQL.
//    Baselines in the same run: the hashing alone, and one primary-key lookup of a node. Cold
//    (nothing hashed before) and as served (the session's previous call of 999 messages was
//    hashed before: its prefix hashes are reused, gateway/recording/prefix-cache.ts).
// 2. POST /v1/messages through `verbatim serve` over a bare pass-through proxy (bare-pass-
//    through.ts), both in front of the same local upstream (upstream.ts), sequential requests
//    taking turns in blocks: p50 over the bare proxy, goal within 1 ms beyond one durable
//    commit, with the server on SQLite and on PostgreSQL (each beside the proxy in its run).
//    The commit is given two ways: a small row back to back before the run (as first measured),
//    and the call's own row (the same table and size) after the same think time, in blocks
//    taking turns with the requests, which is the commit the answer waits for.
// 3. What writing each call's history as gateway messages adds to recording it (in process).
// `node bin/run-ts.js bench/server/recorded-calls.ts [--quick] [--overhead-only] [--pg-url URL]`
// (--overhead-only: part 2 alone).
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import { prefixHashes } from "../../packages/server/src/gateway/recording/chain-matching.js";
import { PrefixHashCache } from "../../packages/server/src/gateway/recording/prefix-cache.js";
import { RecordedCalls } from "../../packages/server/src/gateway/recording/calls.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { inTransaction } from "../../packages/server/src/store/transaction.js";
import {
  findDeepestNode,
  insertChainNodes,
  insertRecordedCall,
  type ChainNodeRow,
} from "../../packages/server/src/store/repositories/recorded-calls.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean" },
    "overhead-only": { type: "boolean" },
    "pg-url": { type: "string" },
  },
});
const quick = values.quick === true;
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const CONVERSATIONS = 100_000;
const NODES_PER_CONVERSATION = 4;
const LONG = 1000;
const RUNS = quick ? 100 : 400;
const root = new URL("../../", import.meta.url).pathname;

function log(text: string): void {
  process.stderr.write(`[recorded-calls] ${text}\n`);
}

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

function message(index: number, session: string): unknown {
  return index % 2 === 0
    ? {
        role: "user",
        content: [{ type: "text", text: `${session} question ${index}: ${"x".repeat(200)}` }],
      }
    : {
        role: "assistant",
        content: [{ type: "text", text: `answer ${index}: ${"y".repeat(200)}` }],
      };
}

/** An Anthropic Messages answer of `text`, as JSON. */
function answerJson(text: string): string {
  return JSON.stringify({
    id: "msg_bench",
    type: "message",
    role: "assistant",
    model: "claude-bench",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  });
}

async function seed(database: StoreDatabase): Promise<unknown[]> {
  const subject = "bench-subject";
  let batch: ChainNodeRow[] = [];
  const now = new Date().toISOString();
  for (let conversation = 0; conversation < CONVERSATIONS; conversation++) {
    const session = `s${conversation}`;
    const messages = Array.from({ length: NODES_PER_CONVERSATION }, (_, index) =>
      message(index, session),
    );
    const hashes = prefixHashes("anthropic-messages", messages);
    hashes.forEach((hash, position) =>
      batch.push({
        subject_uid: subject,
        prefix_sha256: hash,
        conversation_id: `conv_${conversation}`,
        parent_prefix_sha256: position === 0 ? null : (hashes[position - 1] as string),
        position,
        message_sha256: hash,
        created_at: now,
        message_id: null,
        anchor_message_id: null,
        anchor_count: null,
      }),
    );
    if (batch.length >= 8000) {
      await insertChainNodes(database.db, batch);
      batch = [];
    }
  }
  // The long conversation: 999 messages stored, the request adds the 1,000th.
  const long = Array.from({ length: LONG }, (_, index) => message(index, "long"));
  const hashes = prefixHashes("anthropic-messages", long);
  for (let position = 0; position < LONG - 1; position++) {
    batch.push({
      subject_uid: subject,
      prefix_sha256: hashes[position] as string,
      conversation_id: "conv_long",
      parent_prefix_sha256: position === 0 ? null : (hashes[position - 1] as string),
      position,
      message_sha256: hashes[position] as string,
      created_at: now,
      message_id: null,
      anchor_message_id: null,
      anchor_count: null,
    });
  }
  await insertChainNodes(database.db, batch);
  // A table filled in one go has no planner statistics until autovacuum's analyze comes by;
  // a store that grew to this size has them.
  if (database.capabilities.dialect === "postgres") {
    await sql`analyze ai_gateway_chain_nodes`.execute(database.db);
  }
  return long;
}

async function matching(name: string, location: DatabaseLocation): Promise<string> {
  const database = await openDatabase(location, { poolSize: 2 });
  try {
    await migrateDatabase(database);
    log(`${name}: seeding ${CONVERSATIONS} conversations`);
    const long = await seed(database);
    const hashOnly: number[] = [];
    const lookupOnly: number[] = [];
    const match: number[] = [];
    const cachedMatch: number[] = [];
    const cache = new PrefixHashCache();
    const previousCall = long.slice(0, LONG - 1);
    const someHash = prefixHashes("anthropic-messages", long)[500] as string;
    for (let run = 0; run < RUNS; run++) {
      let start = performance.now();
      prefixHashes("anthropic-messages", long);
      hashOnly.push(performance.now() - start);
      start = performance.now();
      await findDeepestNode(database.db, "bench-subject", [someHash]);
      lookupOnly.push(performance.now() - start);
      start = performance.now();
      const hashes = prefixHashes("anthropic-messages", long);
      const found = await findDeepestNode(database.db, "bench-subject", hashes);
      match.push(performance.now() - start);
      if (found?.position !== LONG - 2) throw new Error(`matched ${found?.position}`);
      // As the server runs it: the session's previous call (999 messages) was hashed before.
      cache.prefixHashes("anthropic-messages", previousCall);
      start = performance.now();
      const reused = cache.prefixHashes("anthropic-messages", long);
      const again = await findDeepestNode(database.db, "bench-subject", reused);
      cachedMatch.push(performance.now() - start);
      if (again?.position !== LONG - 2) throw new Error(`matched ${again?.position}`);
    }
    const p50 = percentile(match, 0.5);
    const cachedP50 = percentile(cachedMatch, 0.5);
    return (
      `| ${name} | ${percentile(hashOnly, 0.5).toFixed(3)} | ${percentile(lookupOnly, 0.5).toFixed(3)} | ` +
      `${p50.toFixed(3)} | ${percentile(match, 0.9).toFixed(3)} | ` +
      `${cachedP50.toFixed(3)} | ${percentile(cachedMatch, 0.9).toFixed(3)} | ` +
      `${(p50 / percentile(hashOnly, 0.5)).toFixed(2)}x | ${p50 < 2 ? "met" : "NOT met"} | ${cachedP50 < 2 ? "met" : "NOT met"} |`
    );
  } finally {
    await database.close();
  }
}

function child(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ process: ChildProcess; out: () => string }> {
  const process_ = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, VERBATIM_LOG_LEVEL: "error", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    process_.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n") && (!args.includes("serve") || /listening on \S+/.test(out))) {
        resolve({ process: process_, out: () => out });
      }
    });
    process_.on("exit", (code) => {
      if (!args.includes("create")) reject(new Error(`${args.join(" ")} exited ${code}: ${out}`));
      else resolve({ process: process_, out: () => out });
    });
  });
}

/** One durable commit of a small row on the server's database: the floor a recorded call pays. */
async function commitBaseline(location: DatabaseLocation): Promise<number> {
  const database = await openDatabase(location);
  try {
    await migrateDatabase(database);
    const samples: number[] = [];
    for (let run = 0; run < 100; run++) {
      const start = performance.now();
      await inTransaction(database, (db) =>
        db
          .insertInto("ai_gateway_conversations")
          .values({
            id: `conv_commit_${run}`,
            subject_uid: "commit",
            created_at: "",
            metadata: "{}",
          })
          .execute(),
      );
      samples.push(performance.now() - start);
    }
    return percentile(samples, 0.5);
  } finally {
    await database.close();
  }
}

/**
 * The commit a recorded call's answer waits for, measured as the served calls meet it: one
 * durable insert of a recorded-call row of the same size (the request body as the bench sends
 * it, the upstream's answer as base64) into the store's table, after the same think time, in
 * blocks taking turns with the requests (another database file or schema than the server's).
 */
async function callRowCommits(
  database: StoreDatabase,
  bodies: () => string,
  delayMs: number,
  count: number,
): Promise<number[]> {
  const samples: number[] = [];
  // What bench/server/upstream.ts answers.
  const answer = Buffer.from(
    answerJson("The answer is forty-two, as computed from the input."),
  ).toString("base64");
  for (let index = 0; index < count; index++) {
    const requestBody = bodies();
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const start = performance.now();
    await insertRecordedCall(database.db, {
      id: `call_commit_${randomBytes(8).toString("hex")}`,
      subject_uid: "commit",
      conversation_id: "",
      wire_format: "anthropic-messages",
      path: "/v1/messages",
      model: "claude-bench",
      tip_prefix_sha256: "",
      message_count: 0,
      matched_count: 0,
      previous_call_id: null,
      status_code: 200,
      request_headers: '{"content-type":"application/json","anthropic-version":"2023-06-01"}',
      request_body: requestBody,
      response_headers: '{"content-type":"application/json"}',
      response_body_base64: answer,
      redacted: 0,
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      duration_ms: 1,
      created_at: new Date().toISOString(),
    });
    samples.push(performance.now() - start);
  }
  return samples;
}

/** CPU time (user + system) a child process has used, ms (Linux /proc; NaN elsewhere). */
function cpuMs(process_: ChildProcess): number {
  try {
    const stat = readFileSync(`/proc/${process_.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** `--db` text of a location for the CLI (a PostgreSQL schema through the URL's options). */
function dbText(location: DatabaseLocation): string {
  if (location.dialect === "sqlite") return location.path;
  if (location.schema === undefined) return location.url;
  const options = `options=${encodeURIComponent(`-c search_path=${location.schema}`)}`;
  return `${location.url}${location.url.includes("?") ? "&" : "?"}${options}`;
}

async function overhead(
  name: string,
  location: DatabaseLocation,
  baselineLocation: DatabaseLocation,
  delayMs: number,
): Promise<string> {
  const commit = await commitBaseline(location);
  const baseline = await openDatabase(baselineLocation);
  await migrateDatabase(baseline);
  const upstream = await child([
    "bin/run-ts.js",
    "bench/server/upstream.ts",
    "--delay-ms",
    String(delayMs),
  ]);
  const upstreamUrl = upstream.out().split("\n")[0]?.trim() ?? "";
  const bare = await child(["bin/run-ts.js", "bench/server/bare-pass-through.ts", upstreamUrl]);
  const bareUrl = bare.out().split("\n")[0]?.trim() ?? "";
  const created = await child([
    "bin/verbatim.js",
    "keys",
    "create",
    "--db",
    dbText(location),
    "--subject",
    "bench",
  ]);
  await new Promise((resolve) => created.process.on("exit", resolve));
  const key = created.out().trim().split("\n").at(-1) ?? "";
  const server = await child(
    ["bin/verbatim.js", "serve", "--db", dbText(location), "--port", "0"],
    {
      ANTHROPIC_API_KEY: "sk-ant-bench",
      ANTHROPIC_BASE_URL: upstreamUrl,
      VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
      VERBATIM_OPERATOR_TOKEN: "vop_bench",
    },
  );
  const serverUrl = /listening on (\S+)/.exec(server.out())?.[1] ?? "";
  try {
    const targets = [
      { name: "upstream alone", url: upstreamUrl },
      { name: "bare pass-through", url: bareUrl },
      { name: "verbatim /v1/messages", url: serverUrl },
    ];
    const samples = new Map<string, number[]>(targets.map((target) => [target.name, []]));
    const count = quick ? 300 : 1200;
    const block = 50;
    let session = 0;
    let turn = 0;
    const body = () => {
      // A session grows to 20 messages, then a new one starts: every call extends a chain.
      if (turn >= 10) {
        turn = 0;
        session++;
      }
      turn++;
      const messages = Array.from({ length: turn * 2 - 1 }, (_, index) =>
        message(index, `${session}-${randomSuffix}`),
      );
      return JSON.stringify({ model: "claude-bench", max_tokens: 100, messages });
    };
    const randomSuffix = randomBytes(4).toString("hex");
    const rowCommits: number[] = [];
    let cpuBefore = [0, 0];
    // A first round of blocks warms every target up and is not counted (the server's lazily
    // loaded modules and its console worker thread start in it).
    for (let done = -block; done < count; done += block) {
      if (done === 0) cpuBefore = [cpuMs(bare.process), cpuMs(server.process)];
      const commits = await callRowCommits(baseline, body, delayMs, block);
      if (done >= 0) rowCommits.push(...commits);
      for (const target of targets) {
        for (let index = 0; index < block; index++) {
          const text = body();
          const start = performance.now();
          const response = await fetch(`${target.url}/v1/messages`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-api-key": key,
              "anthropic-version": "2023-06-01",
            },
            body: text,
          }).catch((error: unknown) => {
            throw new Error(`${name}, ${delayMs} ms: ${target.name}, request ${done + index}`, {
              cause: error,
            });
          });
          await response.arrayBuffer();
          if (done >= 0) samples.get(target.name)?.push(performance.now() - start);
          if (response.status !== 200) throw new Error(`${target.name}: ${response.status}`);
        }
      }
    }
    // The server's placing may run up to 100 ms after the last answer: counted too.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [bareCpu, serverCpu] = [cpuMs(bare.process), cpuMs(server.process)];
    log(
      `${name}, ${delayMs} ms think time: CPU per request (process user + system time over the ` +
        `${count} requests, 10 ms ticks): bare proxy ${((bareCpu - (cpuBefore[0] ?? 0)) / count).toFixed(2)} ms, ` +
        `verbatim ${((serverCpu - (cpuBefore[1] ?? 0)) / count).toFixed(2)} ms`,
    );
    const p50 = (name: string) => percentile(samples.get(name) ?? [], 0.5);
    const alone = p50("upstream alone");
    const barep = p50("bare pass-through");
    const served = p50("verbatim /v1/messages");
    const rowCommit = percentile(rowCommits, 0.5);
    return (
      `| ${name} | ${delayMs} ms | ${alone.toFixed(2)} | ${barep.toFixed(2)} | ${served.toFixed(2)} | ` +
      `${percentile(samples.get("verbatim /v1/messages") ?? [], 0.9).toFixed(2)} | ` +
      `+${(served - barep).toFixed(2)} ms | ${commit.toFixed(2)} | +${(served - barep - commit).toFixed(2)} ms | ` +
      `${served - barep - commit < 1 ? "met" : "NOT met"} | ${rowCommit.toFixed(2)} | ` +
      `+${(served - barep - rowCommit).toFixed(2)} ms | ${served - barep - rowCommit < 1 ? "met" : "NOT met"} |`
    );
  } finally {
    await baseline.close();
    // Each ends before the next measurement (the server once it has placed every call).
    for (const process_ of [server.process, bare.process, upstream.process]) {
      process_.removeAllListeners("exit");
      const exited = new Promise((resolve) => process_.once("exit", resolve));
      process_.kill("SIGTERM");
      await exited;
    }
  }
}

/**
 * What writing each call's history as gateway messages costs (gateway/recording/history.ts):
 * RecordedCalls.record in process, with and without it, sessions growing to 19 messages,
 * blocks taking turns.
 */
async function historyCost(name: string, location: DatabaseLocation): Promise<string> {
  const database = await openDatabase(location, { poolSize: 2 });
  try {
    await migrateDatabase(database);
    const recorders = {
      with: new RecordedCalls(database),
      without: new RecordedCalls(database, { gatewayMessages: false }),
    };
    const samples = { with: [] as number[], without: [] as number[] };
    // The part the client's answer waits for: the call's bytes committed (RecordedCalls.keep).
    const kept: number[] = [];
    const answer = answerJson("stub answer");
    for (let block = 0; block < (quick ? 8 : 24); block++) {
      for (const kind of ["with", "without"] as const) {
        const session = `${kind}-${block}-${randomBytes(3).toString("hex")}`;
        const messages: unknown[] = [];
        for (let turn = 0; turn < 10; turn++) {
          if (turn > 0) messages.push(message(turn * 2 - 1, session));
          messages.push(message(turn * 2, session));
          const start = performance.now();
          const { placed } = await recorders[kind].keep({
            subjectUid: `bench-${kind}`,
            format: "anthropic-messages",
            path: "/v1/messages",
            model: "claude-bench",
            messages: [...messages],
            requestHeaders: {},
            requestBody: Buffer.from(JSON.stringify({ model: "claude-bench", messages })),
            statusCode: 200,
            responseHeaders: { "content-type": "application/json" },
            responseBody: Buffer.from(answer),
            durationMs: 1,
          });
          if (block > 1 && kind === "with") kept.push(performance.now() - start);
          await placed;
          if (block > 1) samples[kind].push(performance.now() - start);
        }
      }
    }
    const without = percentile(samples.without, 0.5);
    const with_ = percentile(samples.with, 0.5);
    return `| ${name} | ${without.toFixed(2)} | ${with_.toFixed(2)} | +${(with_ - without).toFixed(2)} | ${percentile(samples.without, 0.9).toFixed(2)} | ${percentile(samples.with, 0.9).toFixed(2)} | ${percentile(kept, 0.5).toFixed(2)} | ${percentile(kept, 0.9).toFixed(2)} |`;
  } finally {
    await database.close();
  }
}

const loadBefore = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-recorded-"));
const schema = `verbatim_bench_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: pgUrl });
let pgReady = false;
try {
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  pgReady = true;
} catch (error) {
  log(`PostgreSQL unavailable (${String(error)}): its row is skipped`);
}
try {
  if (values["overhead-only"] !== true) {
    const rows = [
      await matching("sqlite", { dialect: "sqlite", path: join(folder, "match.sqlite") }),
    ];
    if (pgReady) rows.push(await matching("postgres", { dialect: "postgres", url: pgUrl, schema }));
    process.stdout.write(
      `\nMatching a request of ${LONG} messages (999 stored) against ${CONVERSATIONS} conversations ` +
        `(${CONVERSATIONS * NODES_PER_CONVERSATION + LONG - 1} chain nodes), ${RUNS} runs, ms:\n\n` +
        "| database | hashing alone p50 | one indexed lookup p50 | match (hash + lookup) p50 | match p90 | match after the session's previous call p50 | p90 | match / hashing | goal (< 2 ms), cold | goal, as served |\n" +
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
        rows.join("\n") +
        "\n",
    );
    const costRows = [
      await historyCost("sqlite", { dialect: "sqlite", path: join(folder, "history.sqlite") }),
    ];
    if (pgReady) {
      costRows.push(await historyCost("postgres", { dialect: "postgres", url: pgUrl, schema }));
    }
    process.stdout.write(
      "\nRecording one call (in process, sessions of up to 19 messages: its bytes kept, then placed " +
        "in its chain), without and with its history written as gateway messages, ms:\n\n" +
        "| database | raw calls and nodes p50 | with gateway messages p50 | difference | raw p90 | with messages p90 | bytes kept (what the answer waits for) p50 | p90 |\n" +
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n" +
        costRows.join("\n") +
        "\n",
    );
  }
  const overheadRows: string[] = [];
  // An upstream that answers at once (each call's placing overlaps the next call) and one that
  // thinks 20 ms first (a stand-in for a model's time to first token).
  for (const delayMs of [0, 20]) {
    const sqlitePath = join(folder, `serve-${delayMs}.sqlite`);
    const sqliteBaseline = join(folder, `commit-${delayMs}.sqlite`);
    overheadRows.push(
      await overhead(
        "sqlite",
        { dialect: "sqlite", path: sqlitePath },
        { dialect: "sqlite", path: sqliteBaseline },
        delayMs,
      ),
    );
    if (pgReady) {
      const serveSchema = `${schema}_serve`;
      const commitSchema = `${schema}_commit`;
      await admin.query(`create schema ${serveSchema}`);
      await admin.query(`create schema ${commitSchema}`);
      try {
        const location = { dialect: "postgres" as const, url: pgUrl, schema: serveSchema };
        const baseline = { dialect: "postgres" as const, url: pgUrl, schema: commitSchema };
        overheadRows.push(await overhead("postgres", location, baseline, delayMs));
      } finally {
        await admin.query(`drop schema ${serveSchema} cascade`);
        await admin.query(`drop schema ${commitSchema} cascade`);
      }
    }
  }
  process.stdout.write(
    `\nPOST /v1/messages (JSON, growing sessions of up to 19 messages, each call recorded) over a bare ` +
      "pass-through proxy, sequential, blocks of 50 taking turns, ms (load average before: " +
      `${loadBefore}, after: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}):\n\n` +
      "| database | upstream think time | upstream alone p50 | bare pass-through p50 | verbatim p50 | verbatim p90 | over the bare proxy | one durable commit p50 (small row, back to back) | over the bare proxy and that commit | goal (< 1 ms beyond it) | the call's row committed after the same think time p50 | over the bare proxy and that commit | goal (< 1 ms beyond it) |\n" +
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
      overheadRows.join("\n") +
      "\n",
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
  if (pgReady) await admin.query(`drop schema ${schema} cascade`);
  await admin.end().catch(() => undefined);
}
