/**
 * Issue 33, item 1: recorded bodies are kept as pieces of their subject, each distinct byte
 * once (docs/server/recorded-calls.md, "How recorded bytes are stored"), and given back byte for
 * byte. Property-tested on SQLite and PostgreSQL: random bodies (binary, not UTF-8, JSON-like),
 * random edits between a session's calls (inserts, deletes, replacements, a block of an earlier
 * body moved elsewhere), content-encoded responses, every compression setting, two subjects
 * interleaved. Then the figures that make it worth it: a growing session stores about its new
 * bytes per call, a block sent again elsewhere is not stored again, nor is it shared with
 * another subject; and a base deleted under a recorder is not referred to. Packing (small
 * pieces joined into larger ones, bodies/packing.ts) runs at random points of the random
 * sessions, and beside a long session's recording and reading.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  RecordedCalls,
  type CallToRecord,
} from "../../packages/server/src/gateway/recording/calls.js";
import { BodyReader } from "../../packages/server/src/gateway/recording/bodies/body-reader.js";
import {
  codecOf,
  type Compression,
} from "../../packages/server/src/gateway/recording/bodies/compression.js";
import { packSubject } from "../../packages/server/src/gateway/recording/bodies/packing.js";
import { BodyReadCache } from "../../packages/server/src/gateway/recording/bodies/read-cache.js";
import { readRecordedCall } from "../../packages/server/src/gateway/recording/call-bytes.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { propertyRuns } from "../support/property-runs.js";
import { recordedCallRows } from "../support/recorded-calls.js";

function call(subjectUid: string, request: Buffer, response: Buffer, gzip: boolean): CallToRecord {
  return {
    subjectUid,
    format: "anthropic-messages",
    path: "/v1/messages",
    model: "claude-test",
    messages: [],
    requestHeaders: { "content-type": "application/json" },
    requestBody: request,
    statusCode: 200,
    responseHeaders: gzip
      ? { "content-type": "application/json", "content-encoding": "gzip" }
      : { "content-type": "application/octet-stream" },
    responseBody: gzip ? gzipSync(response) : response,
    durationMs: 1,
  };
}

/** Bytes that look like a request: JSON text, arbitrary bytes, or both. */
const bodyBytes = fc.oneof(
  fc.uint8Array({ minLength: 0, maxLength: 30_000 }).map((bytes) => Buffer.from(bytes)),
  fc
    .array(fc.string({ unit: "binary", maxLength: 400 }), { maxLength: 60 })
    .map((parts) => Buffer.from(JSON.stringify({ messages: parts }), "utf8")),
  // Not UTF-8: lone continuation bytes and a truncated sequence among text.
  fc
    .tuple(fc.string({ maxLength: 3000 }), fc.uint8Array({ minLength: 1, maxLength: 40 }))
    .map(([text, junk]) =>
      Buffer.concat([Buffer.from(text), Buffer.from([0x80, 0xbf, 0xe2, 0x82]), Buffer.from(junk)]),
    ),
);

type Edit =
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number }
  | { kind: "replace"; at: number; bytes: Uint8Array }
  | { kind: "move"; from: number; at: number; length: number; source: number }
  | { kind: "new"; bytes: Buffer };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ maxLength: 5000 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.nat(6000) }),
  fc.record({
    kind: fc.constant("replace" as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }),
  }),
  fc.record({
    kind: fc.constant("move" as const),
    from: fc.nat(),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 20_000 }),
    source: fc.nat(),
  }),
  bodyBytes.map((bytes) => ({ kind: "new" as const, bytes })),
);

/** The next body of a session: the previous one edited (a block of any earlier one moved in). */
function applyEdits(earlier: readonly Buffer[], edits: readonly Edit[]): Buffer {
  let body = earlier[earlier.length - 1] as Buffer;
  for (const change of edits) {
    const at = body.length === 0 ? 0 : change.kind === "new" ? 0 : change.at % (body.length + 1);
    switch (change.kind) {
      case "insert":
        body = Buffer.concat([body.subarray(0, at), change.bytes, body.subarray(at)]);
        break;
      case "delete":
        body = Buffer.concat([body.subarray(0, at), body.subarray(at + change.length)]);
        break;
      case "replace":
        body = Buffer.concat([
          body.subarray(0, at),
          change.bytes,
          body.subarray(at + change.bytes.length),
        ]);
        break;
      case "move": {
        const source = earlier[change.source % earlier.length] as Buffer;
        const from = source.length === 0 ? 0 : change.from % source.length;
        body = Buffer.concat([
          body.subarray(0, at),
          source.subarray(from, from + change.length),
          body.subarray(at),
        ]);
        break;
      }
      case "new":
        body = change.bytes;
        break;
    }
  }
  return body;
}

const session = fc.record({
  first: bodyBytes,
  steps: fc.array(
    fc.record({
      edits: fc.array(edit, { minLength: 1, maxLength: 3 }),
      response: fc.uint8Array({ maxLength: 8000 }).map((bytes) => Buffer.from(bytes)),
      gzip: fc.boolean(),
      other: fc.boolean(),
      /** Pack the subject after this call: no, full packs only, or all. */
      pack: fc.constantFrom("no", "no", "full", "all"),
      /** Read the subject's calls through a read cache after this call. */
      read: fc.boolean(),
      /**
       * The request's part prepared before the call is kept, as the pass-through routes do while
       * the upstream answers: no, just before, or before the subjects are packed.
       */
      early: fc.constantFrom("no", "before", "across-pack"),
    }),
    { minLength: 1, maxLength: 7 },
  ),
  compression: fc.constantFrom<Compression>("auto", "none", "gzip", "brotli"),
});

/** Bytes of the subject's pieces as stored, and before compression. */
async function pieceBytes(database: StoreDatabase, subjectUid: string) {
  const rows = await database.db
    .selectFrom("ai_gateway_body_pieces")
    .select(["size", "bytes"])
    .where("subject_uid", "=", subjectUid)
    .execute();
  return {
    stored: rows.reduce((sum, row) => sum + row.bytes.length, 0),
    size: rows.reduce((sum, row) => sum + Number(row.size), 0),
  };
}

function randomText(seed: number, length: number): string {
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

describeEachDialect(
  "issue 33: recorded bodies stored once, given back byte for byte",
  (getDatabase) => {
    const runs = propertyRuns(12);
    const recorders: RecordedCalls[] = [];
    afterAll(async () => {
      for (const recorder of recorders) await recorder.close();
    });
    let recorder: RecordedCalls;
    /** A stored call's request read through `cache`, as the console reads it. */
    const readRequest = async (id: string, cache: BodyReadCache) => {
      const row = await readRecordedCall(getDatabase(), id);
      return new BodyReader(getDatabase().db, cache).request(row);
    };
    beforeAll(() => {
      recorder = new RecordedCalls(getDatabase(), { gatewayMessages: false });
      recorders.push(recorder);
    });

    it(
      "random bodies with random edits between calls come back byte for byte (both bodies, every setting, two subjects)",
      async () => {
        await fc.assert(
          fc.asyncProperty(session, async ({ first, steps, compression }) => {
            const own = new RecordedCalls(getDatabase(), { gatewayMessages: false, compression });
            recorders.push(own);
            const cache = new BodyReadCache();
            const subject = uniqueName("bodies");
            const other = uniqueName("bodies_other");
            const sent = new Map<string, { request: Buffer; response: Buffer }>();
            const bodies: Buffer[] = [first];
            const pack = async (all: boolean) => {
              for (const subjectUid of [subject, other]) {
                await packSubject(getDatabase(), subjectUid, { codec: codecOf(compression), all });
              }
            };
            const keep = async (
              subjectUid: string,
              request: Buffer,
              response: Buffer,
              gzip: boolean,
              early: "no" | "before" | "across-pack" = "no",
            ) => {
              const preparedRequest =
                early === "no" ? undefined : own.prepareRequest(subjectUid, request);
              if (early === "across-pack") {
                await preparedRequest;
                await pack(true);
              }
              const kept = await own.keep({
                ...call(subjectUid, request, response, gzip),
                ...(preparedRequest === undefined ? {} : { preparedRequest }),
              });
              sent.set(kept.callId, {
                request,
                response: gzip ? gzipSync(response) : response,
              });
              await kept.placed;
            };
            const readAll = async () => {
              for (const row of await recordedCallRows(getDatabase(), subject)) {
                const read = await readRequest(row.id, cache);
                expect(read.equals(sent.get(row.id)?.request ?? Buffer.alloc(1))).toBe(true);
              }
            };
            await keep(subject, first, Buffer.from("first"), false);
            for (const step of steps) {
              const body = applyEdits(bodies, step.edits);
              bodies.push(body);
              const subjectUid = step.other ? other : subject;
              await keep(subjectUid, body, step.response, step.gzip, step.early);
              if (step.pack !== "no") await pack(step.pack === "all");
              if (step.read) await readAll();
            }
            await readAll();
            for (const subjectUid of [subject, other]) {
              for (const row of await recordedCallRows(getDatabase(), subjectUid)) {
                const expected = sent.get(row.id);
                expect(row.body_storage).toBe(1);
                expect(row.request.equals(expected?.request ?? Buffer.alloc(1))).toBe(true);
                // The response as received: still gzip-encoded when it came so.
                expect(row.response.equals(expected?.response ?? Buffer.alloc(1))).toBe(true);
                expect([row.request_size, row.response_size]).toEqual([
                  expected?.request.length,
                  expected?.response.length,
                ]);
              }
            }
          }),
          runs.parameters,
        );
      },
      runs.timeout(120_000),
    );

    it("a growing session stores about the bytes each call adds, not its whole history again", async () => {
      const subject = uniqueName("growing");
      const system = randomText(1, 40_000);
      const turns: string[] = [];
      let sentBytes = 0;
      let newBytes = 0;
      for (let index = 0; index < 30; index++) {
        const turn = JSON.stringify({ role: "user", content: randomText(index + 7, 3000) });
        turns.push(turn);
        const body = Buffer.from(
          `{"model":"m","messages":[${turns.join(",")}],"system":${JSON.stringify(system)},"max_tokens":10}`,
        );
        sentBytes += body.length;
        newBytes += index === 0 ? body.length : turn.length + 1;
        await (
          await recorder.keep(call(subject, body, Buffer.from(`answer ${index}`), false))
        ).placed;
      }
      const { size } = await pieceBytes(getDatabase(), subject);
      // Each distinct byte once (and the answers): within 3 % of the new bytes, 1/15 of those sent.
      expect(size).toBeLessThan(newBytes * 1.03 + 30 * 20);
      expect(size).toBeLessThan(sentBytes / 15);
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.at(-1)?.request_base_call_id).toBe(rows.at(-2)?.id);
    });

    it("a block sent again elsewhere in a later body is not stored again, but another subject stores its own", async () => {
      const subject = uniqueName("moved");
      const image = Buffer.from(randomText(99, 60_000)).toString("base64");
      const a = Buffer.from(JSON.stringify({ messages: [{ image }, "first question"] }));
      const b = Buffer.from(JSON.stringify({ tools: ["t"], messages: ["unrelated", { image }] }));
      // A fresh recorder: no recent body to diff against, only the chunk index finds the image.
      await (
        await recorder.keep(call(subject, a, Buffer.from("1"), false))
      ).placed;
      const fresh = new RecordedCalls(getDatabase(), {
        gatewayMessages: false,
        compression: "none",
      });
      recorders.push(fresh);
      await (
        await fresh.keep(call(subject, b, Buffer.from("2"), false))
      ).placed;
      const { size } = await pieceBytes(getDatabase(), subject);
      expect(size).toBeLessThan(a.length + 2 * 16_384 + 100);
      const other = uniqueName("moved_other");
      await (
        await fresh.keep(call(other, b, Buffer.from("2"), false))
      ).placed;
      expect((await pieceBytes(getDatabase(), other)).size).toBeGreaterThanOrEqual(b.length);
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.map((row) => row.requestText)).toEqual([a.toString(), b.toString()]);
      expect((await recordedCallRows(getDatabase(), other))[0]?.request.equals(b)).toBe(true);
    });

    it("a base deleted under the recorder is not referred to: the next body is stored whole", async () => {
      const subject = uniqueName("stale");
      const base = Buffer.from(randomText(5, 20_000));
      const kept = await recorder.keep(call(subject, base, Buffer.from("1"), false));
      await kept.placed;
      // As a prune in another process would: the call and its pieces are gone.
      await getDatabase()
        .db.deleteFrom("ai_gateway_recorded_calls")
        .where("id", "=", kept.callId)
        .execute();
      await getDatabase()
        .db.deleteFrom("ai_gateway_body_chunks")
        .where("subject_uid", "=", subject)
        .execute();
      await getDatabase()
        .db.deleteFrom("ai_gateway_body_pieces")
        .where("subject_uid", "=", subject)
        .execute();
      const next = Buffer.concat([base, Buffer.from(" and one more turn")]);
      await (
        await recorder.keep(call(subject, next, Buffer.from("2"), false))
      ).placed;
      const [row] = await recordedCallRows(getDatabase(), subject);
      expect(row?.request_base_call_id).toBeNull();
      expect(row?.request.equals(next)).toBe(true);
    });

    it("a base deleted after the request was prepared (while the upstream answered) is not referred to", async () => {
      const subject = uniqueName("stale_early");
      const base = Buffer.from(randomText(6, 20_000));
      await (
        await recorder.keep(call(subject, base, Buffer.from("1"), false))
      ).placed;
      const next = Buffer.concat([base, Buffer.from(" and one more turn")]);
      const preparedRequest = recorder.prepareRequest(subject, next);
      const prepared = await preparedRequest;
      // Prepared as a diff of the first call: the part the answer's path no longer makes.
      expect(prepared?.base).toBeDefined();
      for (const table of [
        "ai_gateway_recorded_calls",
        "ai_gateway_body_chunks",
        "ai_gateway_body_pieces",
      ] as const) {
        await getDatabase().db.deleteFrom(table).where("subject_uid", "=", subject).execute();
      }
      await (
        await recorder.keep({ ...call(subject, next, Buffer.from("2"), false), preparedRequest })
      ).placed;
      const [row] = await recordedCallRows(getDatabase(), subject);
      expect(row?.request_base_call_id).toBeNull();
      expect(row?.request.equals(next)).toBe(true);
      expect(row?.response.equals(Buffer.from("2"))).toBe(true);
    });

    it("issue 33: a request read again, or the next one of its session, takes the pieces it shares from the read cache", async () => {
      const subject = uniqueName("read_cache");
      const bodies = [Buffer.from(randomText(11, 30_000))];
      for (const turn of [" the second turn", " the third turn"]) {
        bodies.push(Buffer.concat([bodies.at(-1) as Buffer, Buffer.from(turn)]));
      }
      const ids: string[] = [];
      for (const body of bodies) {
        const kept = await recorder.keep(call(subject, body, Buffer.from("answer"), false));
        await kept.placed;
        ids.push(kept.callId);
      }
      const cache = new BodyReadCache();
      expect((await readRequest(ids[1] as string, cache)).equals(bodies[1] as Buffer)).toBe(true);
      expect(cache.size.calls).toBe(1);
      // Every piece but the ones the third call brought is gone from the store: read from the
      // cache, the second call's request is whole, and the third needs only its own piece.
      const third = await readRecordedCall(getDatabase(), ids[2] as string);
      await getDatabase()
        .db.deleteFrom("ai_gateway_body_pieces")
        .where("subject_uid", "=", subject)
        .where("created_at", "!=", third.created_at)
        .execute();
      expect((await readRequest(ids[1] as string, cache)).equals(bodies[1] as Buffer)).toBe(true);
      expect((await readRequest(ids[2] as string, cache)).equals(bodies[2] as Buffer)).toBe(true);
      // Without the cache the pieces are missed.
      await expect(readRequest(ids[2] as string, new BodyReadCache())).rejects.toThrow(/gone/);
    });

    it("issue 33: the read cache never gives a freed piece's bytes for a new piece that took its id", async () => {
      const subject = uniqueName("read_cache_reused");
      const first = Buffer.from(randomText(12, 20_000));
      const kept = await recorder.keep(call(subject, first, Buffer.from("1"), false));
      await kept.placed;
      const cache = new BodyReadCache();
      expect((await readRequest(kept.callId, cache)).equals(first)).toBe(true);
      const pieceIds = async () =>
        (
          await getDatabase()
            .db.selectFrom("ai_gateway_body_pieces")
            .select("id")
            .where("subject_uid", "=", subject)
            .execute()
        ).map((row) => Number(row.id));
      const freed = await pieceIds();
      // As `verbatim db delete-subject` in another process would: the call and its pieces go.
      await getDatabase()
        .db.deleteFrom("ai_gateway_recorded_calls")
        .where("id", "=", kept.callId)
        .execute();
      for (const table of ["ai_gateway_body_chunks", "ai_gateway_body_pieces"] as const) {
        await getDatabase().db.deleteFrom(table).where("subject_uid", "=", subject).execute();
      }
      const second = Buffer.from(randomText(13, 20_000));
      const next = await recorder.keep(call(subject, second, Buffer.from("2"), false));
      await next.placed;
      // SQLite numbers a piece after the largest: the new piece has the freed one's id.
      if (getDatabase().capabilities.dialect === "sqlite") {
        expect(await pieceIds()).toEqual(freed);
      }
      expect((await readRequest(next.callId, cache)).equals(second)).toBe(true);
    });

    it("issue 33: a long session packed while it records and is read stays byte for byte, and packs shrink it", async () => {
      const database = getDatabase();
      const subject = uniqueName("packed");
      const own = new RecordedCalls(database, { gatewayMessages: false, packAfterMs: 5 });
      recorders.push(own);
      const system = randomText(21, 30_000);
      const turns: string[] = [];
      const sent = new Map<string, Buffer>();
      const cache = new BodyReadCache();
      const ids: string[] = [];
      for (let index = 0; index < 45; index++) {
        turns.push(JSON.stringify({ role: "user", content: randomText(index + 40, 2500) }));
        const body = Buffer.from(
          `{"model":"m","messages":[${turns.join(",")}],"system":${JSON.stringify(system)}}`,
        );
        const kept = await own.keep(
          call(subject, body, Buffer.from(randomText(index, 900)), false),
        );
        sent.set(kept.callId, body);
        ids.push(kept.callId);
        // Reads race the packing the recorder runs in the background.
        const reading = readRequest(kept.callId, cache);
        if (index % 7 === 3) await new Promise((resolve) => setTimeout(resolve, 20));
        if (index % 5 === 0) {
          await packSubject(database, subject, { codec: codecOf("auto"), all: index % 2 === 0 });
        }
        expect((await reading).equals(body)).toBe(true);
        await kept.placed;
      }
      await own.bodies.packing?.idle();
      await packSubject(database, subject, { codec: codecOf("auto") });
      // A fresh reader and a fresh recorder: the chunk index finds the moved bytes.
      for (const [index, id] of ids.entries()) {
        const fresh = await readRequest(id, new BodyReadCache());
        expect(fresh.equals(sent.get(id) as Buffer)).toBe(true);
        if (index % 9 === 0) expect((await readRequest(id, cache)).equals(fresh)).toBe(true);
      }
      for (const row of await recordedCallRows(database, subject)) {
        expect(row.request.equals(sent.get(row.id) as Buffer)).toBe(true);
      }
      // Pieces left and packs: a few rows, not one per call.
      const rowsOf = async (table: "ai_gateway_body_pieces" | "ai_gateway_body_packs") =>
        (
          await database.db
            .selectFrom(table)
            .select("id")
            .where("subject_uid", "=", subject)
            .execute()
        ).length;
      const pieces = await rowsOf("ai_gateway_body_pieces");
      expect(pieces + (await rowsOf("ai_gateway_body_packs"))).toBeLessThan(10);
      const again = new RecordedCalls(database, { gatewayMessages: false, compression: "none" });
      recorders.push(again);
      const before = (await pieceBytes(database, subject)).size;
      const body = Buffer.from(`{"system":${JSON.stringify(system)},"other":1}`);
      const kept = await again.keep(call(subject, body, Buffer.from("x"), false));
      await kept.placed;
      expect((await pieceBytes(database, subject)).size - before).toBeLessThan(2 * 16_384);
      expect((await readRequest(kept.callId, new BodyReadCache())).equals(body)).toBe(true);
    }, 60_000);
  },
);
