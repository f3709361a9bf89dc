/**
 * Issue 33, item 4: retention and deletion (docs/server/retention.md). `verbatim db prune
 * --before T` deletes the conversations whose last activity is before T with their messages,
 * recorded calls and jobs, and frees the pieces and images nothing left refers to; a later
 * conversation whose bodies share those bytes (or diff against those calls) still reads back
 * byte for byte. `verbatim db delete-subject S` removes all S owns. Neither touches another
 * subject's rows, even where its calls hold the same bytes; both can run again; a dry run
 * deletes nothing. The server's rolling retention prunes by its clock. SQLite and PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bufferIO, main } from "verbatim-llm/cli";
import {
  RecordedCalls,
  type CallToRecord,
} from "../../packages/server/src/gateway/recording/calls.js";
import { RollingRetention } from "../../packages/server/src/gateway/maintenance/rolling-retention.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { manifestsQuery } from "../../packages/server/src/store/repositories/retention.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { recordedCallRows } from "../support/recorded-calls.js";

const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/** A 1×1 GIF (42 bytes). */
const GIF_BASE64 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const PNG = PNG_BASE64;
const SHARED_PNG = GIF_BASE64;
const SYSTEM = `You are a careful assistant. ${randomBytes(30_000).toString("hex")}`;

function image(data: string) {
  const mediaType = data === GIF_BASE64 ? "image/gif" : "image/png";
  return { type: "image", source: { type: "base64", media_type: mediaType, data } };
}

function answer(text: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: "msg_up",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      usage: { input_tokens: 7, output_tokens: 3 },
    }),
  );
}

function call(subjectUid: string, messages: unknown[], reply: string): CallToRecord {
  return {
    subjectUid,
    format: "anthropic-messages",
    path: "/v1/messages",
    model: "claude-test",
    messages,
    requestHeaders: {},
    requestBody: Buffer.from(JSON.stringify({ model: "claude-test", system: SYSTEM, messages })),
    statusCode: 200,
    responseHeaders: { "content-type": "application/json" },
    responseBody: answer(reply),
    durationMs: 1,
  };
}

/** A session of three calls; returns what each call sent. */
async function session(
  recorder: RecordedCalls,
  subjectUid: string,
  first: string,
  picture: string,
): Promise<Buffer[]> {
  const messages: unknown[] = [
    { role: "user", content: [{ type: "text", text: first }, image(picture), image(SHARED_PNG)] },
  ];
  const sent: Buffer[] = [];
  for (let index = 0; index < 3; index++) {
    const request = call(subjectUid, [...messages], `reply ${index}`);
    sent.push(request.requestBody);
    await (
      await recorder.keep(request)
    ).placed;
    messages.push({ role: "assistant", content: `reply ${index}` });
    messages.push({ role: "user", content: `next ${index} ${randomBytes(200).toString("hex")}` });
  }
  return sent;
}

async function rowCount(
  database: StoreDatabase,
  table:
    | "ai_gateway_conversations"
    | "ai_gateway_messages"
    | "ai_gateway_recorded_calls"
    | "ai_gateway_images"
    | "ai_gateway_body_pieces"
    | "background_agent_jobs",
  subjectUid: string,
): Promise<number> {
  const row = await database.db
    .selectFrom(table)
    .select((select) => select.fn.countAll<string | number>().as("count"))
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

describeEachDialect("issue 33: retention and deletion", (getDatabase, dialect) => {
  let recorder: RecordedCalls;
  let locationText: string;
  beforeAll(() => {
    recorder = new RecordedCalls(getDatabase());
    const location = getDatabase().location;
    locationText =
      location.dialect === "sqlite"
        ? location.path
        : `${location.url}${location.url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${location.schema ?? "public"}`)}`;
  });
  afterAll(async () => {
    await recorder.close();
  });

  async function cli(args: readonly string[]) {
    const io = bufferIO();
    const code = await main([...args, "--db", locationText, "--json"], io);
    expect(io.err()).toBe("");
    expect(code).toBe(0);
    return JSON.parse(io.out().toString()) as Record<string, unknown>;
  }

  it("prune deletes what ended before the cutoff and frees what nothing else refers to; later conversations and other subjects read back byte for byte", async () => {
    const a = uniqueName("retention_a");
    const b = uniqueName("retention_b");
    await session(recorder, a, "old session", PNG);
    // Another subject sends the very same bytes: its pieces are its own.
    const sentByB = await session(recorder, b, "old session", PNG);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const cutoff = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A later session of A: the same system prompt and one shared image; its first request is a
    // diff of the old session's last call.
    const later = await session(recorder, a, "new session", SHARED_PNG);
    const laterRows = (await recordedCallRows(getDatabase(), a)).slice(3);
    expect(laterRows[0]?.request_base_call_id).not.toBeNull();

    const dry = await cli(["db", "prune", "--before", cutoff, "--subject", a, "--dry-run"]);
    expect(dry).toMatchObject({ dry_run: true, conversations: 1, recorded_calls: 3, messages: 6 });
    expect(await rowCount(getDatabase(), "ai_gateway_conversations", a)).toBe(2);

    const piecesBefore = await rowCount(getDatabase(), "ai_gateway_body_pieces", a);
    const report = await cli(["db", "prune", "--before", cutoff, "--subject", a]);
    expect(report).toMatchObject({
      dry_run: false,
      before: cutoff,
      subject_uid: a,
      conversations: 1,
      messages: 6,
      recorded_calls: 3,
      images: 1,
    });
    expect(report["pieces"]).toBeGreaterThan(0);
    expect(await rowCount(getDatabase(), "ai_gateway_body_pieces", a)).toBe(
      piecesBefore - Number(report["pieces"]),
    );
    expect(await rowCount(getDatabase(), "ai_gateway_conversations", a)).toBe(1);
    expect(await rowCount(getDatabase(), "ai_gateway_images", a)).toBe(1);
    const kept = await recordedCallRows(getDatabase(), a);
    expect(
      kept.map((row) => row.request.equals(later[kept.indexOf(row)] ?? Buffer.alloc(0))),
    ).toEqual([true, true, true]);
    expect(kept[0]?.request_base_call_id).toBeNull();
    // B untouched.
    expect(await rowCount(getDatabase(), "ai_gateway_conversations", b)).toBe(1);
    expect(await rowCount(getDatabase(), "ai_gateway_images", b)).toBe(2);
    const rowsOfB = await recordedCallRows(getDatabase(), b);
    expect(
      rowsOfB.every((row, index) => row.request.equals(sentByB[index] ?? Buffer.alloc(0))),
    ).toBe(true);

    // Run again: nothing left to do.
    expect(await cli(["db", "prune", "--before", cutoff, "--subject", a])).toMatchObject({
      conversations: 0,
      recorded_calls: 0,
      pieces: 0,
    });
  });

  it("delete-subject removes all a subject owns and nothing of another's", async () => {
    const a = uniqueName("delete_a");
    const b = uniqueName("delete_b");
    await session(recorder, a, "same", PNG);
    const sentByB = await session(recorder, b, "same", PNG);
    await getDatabase()
      .db.insertInto("background_agent_jobs")
      .values({
        id: `job_${a}`,
        subject_uid: a,
        conversation_id: "conv_none",
        status: "queued",
        retry_budget: 0,
        attempts: 0,
        metadata: "{}",
        result: null,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
        ended_at: null,
      } as never)
      .execute();
    const report = await cli(["db", "delete-subject", a]);
    expect(report).toMatchObject({ subject_uid: a, conversations: 1, recorded_calls: 3, jobs: 1 });
    for (const table of [
      "ai_gateway_conversations",
      "ai_gateway_messages",
      "ai_gateway_recorded_calls",
      "ai_gateway_images",
      "ai_gateway_body_pieces",
      "background_agent_jobs",
    ] as const) {
      expect(await rowCount(getDatabase(), table, a), table).toBe(0);
    }
    const rowsOfB = await recordedCallRows(getDatabase(), b);
    expect(rowsOfB).toHaveLength(3);
    expect(
      rowsOfB.every((row, index) => row.request.equals(sentByB[index] ?? Buffer.alloc(0))),
    ).toBe(true);
    if (dialect === "sqlite") {
      // The freed pages are the file's to reuse.
      const free = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(
        getDatabase().db,
      );
      expect(Number(free.rows[0]?.freelist_count)).toBeGreaterThan(0);
    }
    expect(await cli(["db", "delete-subject", a])).toMatchObject({
      conversations: 0,
      recorded_calls: 0,
    });
  });

  it("the rolling retention prunes by the server's clock", async () => {
    const a = uniqueName("rolling");
    await session(recorder, a, "rolling", PNG);
    const days = 2;
    const inThreeDays = () => Date.now() + 3 * 24 * 60 * 60 * 1000;
    const retention = new RollingRetention(getDatabase(), { days, now: inThreeDays });
    const report = await retention.runOnce();
    expect(report.conversations).toBeGreaterThanOrEqual(1);
    expect(await rowCount(getDatabase(), "ai_gateway_conversations", a)).toBe(0);
    await retention.stop();
  });

  it("a prune lets the process it shares go on serving: timers fire between its steps", async () => {
    // The rolling retention runs inside `verbatim serve`; SQLite's statements never yield, so
    // without turns given back between transactions the server answers nothing until it ends.
    const a = uniqueName("serving");
    const conversations = 40;
    for (let index = 0; index < conversations; index++) {
      await session(recorder, a, `serving ${index}`, PNG);
    }
    let ticks = 0;
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 1);
    const started = performance.now();
    const retention = new RollingRetention(getDatabase(), {
      days: 1,
      now: () => Date.now() + 2 * 24 * 60 * 60 * 1000,
    });
    const report = await retention.runOnce();
    const took = performance.now() - started;
    clearInterval(timer);
    await retention.stop();
    expect(report.conversations).toBeGreaterThanOrEqual(conversations);
    expect(await rowCount(getDatabase(), "ai_gateway_conversations", a)).toBe(0);
    // Turns come between the conversations deleted, whatever the machine's speed (a prune that
    // never yields gives none); how long each gap is depends on the machine's load.
    expect(
      ticks,
      `${ticks} timer turns in ${took.toFixed(0)} ms, longest gap ${longestGap.toFixed(0)} ms`,
    ).toBeGreaterThanOrEqual(conversations / 2);
  });

  it.runIf(dialect === "sqlite")(
    "a sweep reads one subject's manifests through that subject's index, not every subject's calls",
    async () => {
      const compiled = manifestsQuery(getDatabase().db, getDatabase().capabilities, "someone", {
        after: "",
        limit: 1000,
      }).compile();
      const plan = await getDatabase().db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      expect(plan.rows.map((row) => row.detail).join("\n")).toMatch(
        // The primary key (subject_uid, id), migration 0021.
        /USING INDEX sqlite_autoindex_ai_gateway_recorded_calls_1 \(subject_uid=\? AND id>\?\)/,
      );
    },
  );

  it("bad input is refused with what, where and what to do", async () => {
    const io = bufferIO();
    expect(
      await main(["db", "prune", "--before", "last tuesday", "--db", locationText], io),
    ).not.toBe(0);
    expect(io.err()).toMatch(/--before must be an ISO 8601 time, not "last tuesday"/);
    const missing = bufferIO();
    expect(await main(["db", "prune", "--db", locationText], missing)).not.toBe(0);
    expect(missing.err()).toMatch(/--before is required/);
  });
});
