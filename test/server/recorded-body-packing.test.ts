/**
 * Issue 33, goal "recorded bytes ≤ 0.4× the distinct content, compressed", on PostgreSQL too:
 * packing joins a subject's small pieces into packs (bodies/packing.ts) and a packed piece keeps
 * its id, so a pack writes one row and deletes the pieces it holds, and rewrites no call row and
 * no chunk row (on PostgreSQL each rewritten row was a dead tuple, and packing made the store
 * bigger, so it was off there). The server packs on both databases by default, vacuums what
 * packing left dead on PostgreSQL, and a prune frees a pack only once no call names a piece of
 * it.
 */
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RecordedCalls,
  type CallToRecord,
} from "../../packages/server/src/gateway/recording/calls.js";
import { BodyReader } from "../../packages/server/src/gateway/recording/bodies/body-reader.js";
import { codecOf } from "../../packages/server/src/gateway/recording/bodies/compression.js";
import {
  BodyPacking,
  packSubject,
} from "../../packages/server/src/gateway/recording/bodies/packing.js";
import { pruneStore } from "../../packages/server/src/gateway/maintenance/retention.js";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { readRecordedCall } from "../../packages/server/src/gateway/recording/call-bytes.js";
import { startServer } from "../../packages/server/src/server/serve.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import {
  describeEachDialect,
  freshDatabase,
  postgresUrl,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { recordedCallRows } from "../support/recorded-calls.js";
import { until } from "../support/until.js";

/** Words of a session's turns: text that compresses as a real session's does, not to nothing. */
function turnText(seed: number, length: number): string {
  let state = seed;
  const words = ["read", "file", "src", "test", "const", "return", "error", "value", "import"];
  const out: string[] = [];
  let size = 0;
  while (size < length) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const word = `${words[state % words.length]}${state % 997}`;
    out.push(word);
    size += word.length + 1;
  }
  return out.join(" ").slice(0, length);
}

/**
 * A growing session's calls: a system prompt, then per call one more user turn (and the answer
 * before it), as an agent sends its whole history each time.
 */
function sessionCalls(
  subjectUid: string,
  seed: number,
  calls: number,
  turnBytes: number,
  system = turnText(seed, 20_000),
): CallToRecord[] {
  const messages: unknown[] = [];
  const out: CallToRecord[] = [];
  for (let index = 0; index < calls; index++) {
    messages.push({ role: "user", content: turnText(seed * 1000 + index, turnBytes) });
    const reply = `reply ${seed}.${index}: ${turnText(index, 300)}`;
    out.push({
      subjectUid,
      format: "anthropic-messages",
      path: "/v1/messages",
      model: "claude-test",
      messages: [...messages],
      requestHeaders: { "content-type": "application/json" },
      requestBody: Buffer.from(JSON.stringify({ model: "claude-test", system, messages })),
      statusCode: 200,
      responseHeaders: { "content-type": "application/json" },
      responseBody: Buffer.from(
        JSON.stringify({
          id: "msg_up",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: [{ type: "text", text: reply }],
          stop_reason: "end_turn",
          usage: { input_tokens: 7, output_tokens: 3 },
        }),
      ),
      durationMs: 1,
    });
    messages.push({ role: "assistant", content: reply });
  }
  return out;
}

/** Records the calls one after the other; what each call's request was, by call id. */
async function record(
  recorder: RecordedCalls,
  calls: readonly CallToRecord[],
): Promise<Map<string, Buffer>> {
  const sent = new Map<string, Buffer>();
  for (const call of calls) {
    const kept = await recorder.keep(call);
    await kept.placed;
    sent.set(kept.callId, call.requestBody);
  }
  return sent;
}

async function readAll(database: StoreDatabase, sent: ReadonlyMap<string, Buffer>) {
  for (const [id, body] of sent) {
    const row = await readRecordedCall(database, id);
    expect((await new BodyReader(database.db).request(row)).equals(body)).toBe(true);
  }
}

async function rows(database: StoreDatabase, table: "pieces" | "packs", subjectUid: string) {
  return database.db
    .selectFrom(table === "pieces" ? "ai_gateway_body_pieces" : "ai_gateway_body_packs")
    .select("id")
    .where("subject_uid", "=", subjectUid)
    .execute();
}

describeEachDialect("issue 33: packing recorded bytes", (getDatabase, dialect) => {
  const recorders: RecordedCalls[] = [];
  afterAll(async () => {
    for (const recorder of recorders) await recorder.close();
  });
  const recorder = (): RecordedCalls => {
    const made = new RecordedCalls(getDatabase());
    recorders.push(made);
    return made;
  };
  const pack = (subjectUid: string, all = true) =>
    packSubject(getDatabase(), subjectUid, { codec: codecOf("auto"), all });

  /** Each call's manifests, and each chunk row, as stored (PostgreSQL: with its row version). */
  async function snapshot(subjectUid: string) {
    const database = getDatabase();
    const version = dialect === "postgres" ? sql<string>`xmin::text` : sql<string>`''`;
    const calls = await database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["id", "request_manifest", "response_manifest", version.as("version")])
      .where("subject_uid", "=", subjectUid)
      .orderBy("id")
      .execute();
    const chunks = await database.db
      .selectFrom("ai_gateway_body_chunks")
      .select(["hash", "piece_id", "piece_offset", version.as("version")])
      .where("subject_uid", "=", subjectUid)
      .orderBy("hash")
      .execute();
    return {
      calls,
      chunks: chunks.map((chunk) => ({ ...chunk, piece_id: Number(chunk.piece_id) })),
    };
  }

  it("issue 33: a pack writes one row and deletes its pieces: no call row or chunk row is rewritten, and every body reads back", async () => {
    const database = getDatabase();
    const subject = uniqueName("packed");
    const system = turnText(3, 40_000);
    const calls = sessionCalls(subject, 3, 40, 4000, system);
    const sent = await record(recorder(), calls);
    const before = await snapshot(subject);
    expect((await rows(database, "pieces", subject)).length).toBeGreaterThan(40);
    const report = await pack(subject);
    expect(report.packs).toBeGreaterThan(0);
    expect(report.bytesAfter).toBeLessThan(report.bytesBefore);
    // Every piece was small: all of them are in packs now.
    expect(await rows(database, "pieces", subject)).toEqual([]);
    expect((await rows(database, "packs", subject)).length).toBe(report.packs);
    // The same rows, the same row versions (PostgreSQL's xmin): nothing was updated.
    expect(await snapshot(subject)).toEqual(before);
    await readAll(database, sent);
    // The chunk index still finds packed bytes: a fresh recorder (no recent body to diff
    // against) sending the system prompt again in another body stores almost none of it.
    const again = calls[20] as CallToRecord;
    const body = Buffer.from(`{"other":1,"system":${JSON.stringify(system)}}`);
    const more = await record(recorder(), [{ ...again, requestBody: body }]);
    const added = await database.db
      .selectFrom("ai_gateway_body_pieces")
      .select((select) => select.fn.sum<number>("size").as("size"))
      .where("subject_uid", "=", subject)
      .executeTakeFirst();
    expect(Number(added?.size)).toBeLessThan(2 * 16_384 + again.responseBody.length);
    await readAll(database, more);
  });

  it("issue 33: a short last pack is joined again with the pieces after it; full packs only leave a short group", async () => {
    const database = getDatabase();
    const subject = uniqueName("rejoined");
    const calls = sessionCalls(subject, 5, 30, 3000);
    const own = recorder();
    const sent = await record(own, calls.slice(0, 10));
    await pack(subject);
    const first = await rows(database, "packs", subject);
    expect(first).toHaveLength(1);
    for (const [id, body] of await record(own, calls.slice(10, 29))) sent.set(id, body);
    // A subject still recording packs full packs only: these are not one.
    expect((await pack(subject, false)).packs).toBe(0);
    await pack(subject);
    const second = await rows(database, "packs", subject);
    // One pack again, of a larger id: the first was joined into it.
    expect(second).toHaveLength(1);
    expect(Number(second[0]?.id)).toBeGreaterThan(Number(first[0]?.id));
    expect(await rows(database, "pieces", subject)).toEqual([]);
    await readAll(database, sent);
  });

  it("issue 34 item 3: a piece committed after the pack of its run (another server's, on PostgreSQL) is packed into that pack by the next pass", async () => {
    const database = getDatabase();
    const subject = uniqueName("stray");
    const sent = await record(recorder(), sessionCalls(subject, 6, 12, 3000));
    const pieces = await rows(database, "pieces", subject);
    const middle = Number(pieces[Math.floor(pieces.length / 2)]?.id);
    // As a server whose transaction numbered a piece before this pack and committed after it.
    const stray = await database.db
      .selectFrom("ai_gateway_body_pieces")
      .selectAll()
      .where("subject_uid", "=", subject)
      .where("id", "=", middle)
      .executeTakeFirstOrThrow();
    await database.db
      .deleteFrom("ai_gateway_body_pieces")
      .where("subject_uid", "=", subject)
      .where("id", "=", middle)
      .execute();
    expect((await pack(subject)).packs).toBe(1);
    const [packed] = await rows(database, "packs", subject);
    expect(Number(packed?.id)).toBeGreaterThan(middle);
    await database.db.insertInto("ai_gateway_body_pieces").values(stray).execute();
    // A pass with no new pieces after its last pack writes that pack again, the stray in it.
    const report = await pack(subject);
    expect(report).toMatchObject({ packs: 1, pieces: 1, interrupted: false });
    expect(await rows(database, "pieces", subject)).toEqual([]);
    expect(await rows(database, "packs", subject)).toEqual([packed]);
    await readAll(database, sent);
    expect((await pack(subject)).packs).toBe(0);
  });

  it("issue 33: the server's packing tries a pass that failed again, though the subject records nothing more", async () => {
    const database = getDatabase();
    const subject = uniqueName("retried");
    await record(recorder(), sessionCalls(subject, 8, 6, 2000));
    const errors: unknown[] = [];
    let fail = 2;
    const packing = new BodyPacking(database, {
      afterMs: 5,
      codec: codecOf("auto"),
      beforeEach: async () => {
        if (fail-- > 0) throw new Error("the database went away");
      },
      onError: (error) => errors.push(error),
    });
    try {
      packing.written(subject, 1);
      await until(async () => (await rows(database, "pieces", subject)).length === 0, 10_000);
      expect(errors.map((error) => (error as Error).message)).toEqual([
        "the database went away",
        "the database went away",
      ]);
    } finally {
      await packing.stop();
    }
  });

  it("issue 33: a write between two passes of a subject is packed, however the passes and the writes interleave", async () => {
    const database = getDatabase();
    const subject = uniqueName("interleaved");
    const calls = sessionCalls(subject, 12, 3, 2000);
    const own = recorder();
    const keep = async (index: number) => {
      const kept = await own.keep(calls[index] as CallToRecord);
      await kept.placed;
    };
    // Each pack's transaction waits for the test to let it go.
    const waiting: (() => void)[] = [];
    const errors: unknown[] = [];
    const packing = new BodyPacking(database, {
      afterMs: 200,
      codec: codecOf("auto"),
      beforeEach: () => new Promise<void>((resolve) => waiting.push(resolve)),
      onError: (error) => errors.push(error),
    });
    const letGo = () => (waiting.shift() as () => void)();
    try {
      // Pass 1 holds call 1's pieces; pass 2 is queued behind it for call 2.
      await keep(0);
      packing.written(subject, 1);
      await until(() => waiting.length === 1, 5000, 5, "pass 1 at its pack");
      await keep(1);
      packing.written(subject, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      letGo();
      if (dialect === "postgres") {
        // The vacuum after pass 1's pack (PostgreSQL) waits at the same gate first.
        await until(() => waiting.length === 1, 5000, 5, "the vacuum after pass 1");
        letGo();
      }
      await until(() => waiting.length === 1, 5000, 5, "pass 2 at its pack");
      // Call 3 is written while pass 2 runs, and its own pass is due only after pass 2 ended:
      // the subject must still be known then.
      await keep(2);
      packing.written(subject, 1);
      letGo();
      await until(
        async () => {
          if (errors.length > 0) throw errors[0];
          while (waiting.length > 0) letGo();
          return (await rows(database, "pieces", subject)).length === 0;
        },
        5000,
        10,
        "call 3's pieces packed",
      );
    } finally {
      while (waiting.length > 0) letGo();
      await packing.stop();
    }
  });

  it("issue 33: a prune frees a pack no call names a piece of, and keeps an old pack a later call names", async () => {
    const database = getDatabase();
    const subject = uniqueName("pruned_packs");
    const own = recorder();
    const system = turnText(70, 20_000);
    // An old session, packed; then a later one with the same system prompt, whose first request
    // is a diff of the old session's last (its pieces named through it).
    await record(own, sessionCalls(subject, 7, 8, 3000, system));
    await pack(subject);
    const [oldPack] = await rows(database, "packs", subject);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const cutoff = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = await record(own, sessionCalls(subject, 8, 4, 3000, system));
    const report = await pruneStore(database, { before: cutoff, subjectUid: subject });
    expect(report).toMatchObject({ conversations: 1, recorded_calls: 8 });
    // The old pack holds the system prompt the later calls name: kept.
    expect((await rows(database, "packs", subject)).map((row) => Number(row.id))).toEqual([
      Number(oldPack?.id),
    ]);
    await readAll(database, later);
    expect((await recordedCallRows(database, subject)).map((row) => row.id).sort()).toEqual(
      [...later.keys()].sort(),
    );
    // Once the later session goes too, nothing of the subject is left: packs, pieces, chunks.
    await pack(subject);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const end = new Date().toISOString();
    const all = await pruneStore(database, { before: end, subjectUid: subject });
    expect(all).toMatchObject({ conversations: 1, recorded_calls: 4 });
    expect(all.pieces).toBeGreaterThan(0);
    expect(await rows(database, "packs", subject)).toEqual([]);
    expect(await rows(database, "pieces", subject)).toEqual([]);
    const chunks = await database.db
      .selectFrom("ai_gateway_body_chunks")
      .select("hash")
      .where("subject_uid", "=", subject)
      .execute();
    expect(chunks).toEqual([]);
  });
});

describe.skipIf(postgresUrl === undefined)("issue 33: packing on PostgreSQL", () => {
  let fresh: FreshDatabase;
  let upstream: AnthropicUpstream;
  beforeAll(async () => {
    fresh = await freshDatabase("postgres");
    upstream = await startAnthropicUpstream();
  });
  afterAll(async () => {
    await upstream.close();
    await fresh.cleanup();
  });

  /**
   * A schema of the test's own: the tables' sizes are its alone (a piece another test left
   * would keep the pieces table from emptying).
   */
  const ownDatabase = async <T>(test: (own: FreshDatabase) => Promise<T>): Promise<T> => {
    const own = await freshDatabase("postgres");
    try {
      return await test(own);
    } finally {
      await own.cleanup();
    }
  };

  const relationSize = async (database: StoreDatabase, table: string): Promise<number> => {
    const { rows: sizes } = await sql<{
      size: string;
    }>`select coalesce(sum(pg_relation_size(relid)), 0) as size
       from (select ${table}::regclass as relid
         union select relid from pg_partition_tree(${table}::regclass)) t`.execute(database.db);
    return Number(sizes[0]?.size);
  };

  /** Dead rows of a table (its partitions) as its last vacuum left them. */
  const deadRows = async (database: StoreDatabase, table: string): Promise<number> => {
    const { rows: dead } = await sql<{ dead: string | null }>`
      select sum(pg_stat_get_dead_tuples(relid)) as dead
      from (select ${table}::regclass as relid
        union select relid from pg_partition_tree(${table}::regclass)) t`.execute(database.db);
    return Number(dead[0]?.dead ?? 0);
  };

  /** A recorder that packs a subject 5 ms after its last call, and the errors it reports. */
  const packingRecorder = (database: StoreDatabase) => {
    const errors: unknown[] = [];
    const own = new RecordedCalls(database, {
      gatewayMessages: false,
      packAfterMs: 5,
      onLeftoverError: (error) => errors.push(error),
    });
    const everyPiecePacked = (subject: string) =>
      until(
        async () => {
          if (errors.length > 0) throw errors[0];
          return (await rows(database, "pieces", subject)).length === 0;
        },
        20_000,
        10,
        "every piece packed",
      );
    return { own, everyPiecePacked };
  };

  const pagesGivenBack = (database: StoreDatabase) =>
    until(
      async () => (await relationSize(database, "ai_gateway_body_pieces")) === 0,
      45_000,
      10,
      "the pieces table's pages given back",
    );

  it(
    "issue 33: the server's packing vacuums what it leaves dead: once every piece is packed the pieces table gives its pages back",
    () =>
      ownDatabase(async ({ database }) => {
        const { own, everyPiecePacked } = packingRecorder(database);
        try {
          const subject = uniqueName("vacuumed");
          const sent = await record(own, sessionCalls(subject, 9, 30, 4000));
          await everyPiecePacked(subject);
          // Without a vacuum every packed piece stays a dead tuple (an autovacuum may come
          // minutes later, or never): the table keeps its pages.
          // Up to 31 s: a transaction another test file keeps open holds the dead rows meanwhile.
          await pagesGivenBack(database);
          await readAll(database, sent);
        } finally {
          await own.close();
        }
      }),
    90_000,
  );

  it(
    "issue 33: a vacuum that a long transaction kept from removing the packed pieces runs again once it ends",
    () =>
      ownDatabase(async ({ database, locationText }) => {
        const { own, everyPiecePacked } = packingRecorder(database);
        const reader = new pg.Client({ connectionString: locationText });
        await reader.connect();
        try {
          // As a long report or a backup: a snapshot older than the pieces packing deletes.
          await reader.query("begin isolation level repeatable read");
          await reader.query("select count(*) from ai_gateway_body_pieces");
          const subject = uniqueName("long_reader");
          const sent = await record(own, sessionCalls(subject, 11, 20, 4000));
          await everyPiecePacked(subject);
          await until(
            async () => (await deadRows(database, "ai_gateway_body_pieces")) > 0,
            20_000,
            10,
            "the packed pieces counted dead",
          );
          // Past the vacuum a pass leaves for later (at most one a second): still held.
          await new Promise((resolve) => setTimeout(resolve, 2500));
          expect(await deadRows(database, "ai_gateway_body_pieces")).toBeGreaterThan(0);
          expect(await relationSize(database, "ai_gateway_body_pieces")).toBeGreaterThan(0);
          await reader.query("commit");
          // Nothing more is recorded: the vacuums that follow give the pages back.
          await pagesGivenBack(database);
          await readAll(database, sent);
        } finally {
          await reader.end();
          await own.close();
        }
      }),
    90_000,
  );

  it("issue 33: verbatim serve packs by default on PostgreSQL (every 2 MiB a subject records)", async () => {
    const server = await startServer({
      database: fresh.locationText,
      port: 0,
      env: {
        VERBATIM_WEB_BUILD: "off",
        VERBATIM_OPERATOR_TOKEN: "vop_packing-test",
        VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
      },
    });
    try {
      const subject = uniqueName("served");
      const { key } = await createApiKey(server.database, subject);
      const messages: unknown[] = [];
      // Three calls of 900 KB new turns each: past two packs' worth of new bytes.
      for (let index = 0; index < 3; index++) {
        messages.push({ role: "user", content: turnText(500 + index, 900_000) });
        const reply = await fetch(`${server.url}/v1/messages`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
          },
          body: JSON.stringify({ model: "claude-test", max_tokens: 10, messages }),
        });
        expect(reply.status).toBe(200);
        const answer = (await reply.json()) as { content: { text: string }[] };
        messages.push({ role: "assistant", content: answer.content[0]?.text ?? "" });
      }
      await until(async () => (await rows(server.database, "packs", subject)).length > 0, 20_000);
    } finally {
      await server.close();
    }
  }, 60_000);
});
