/**
 * Regression: "Invalid UTF-8 in a body is stored as U+FFFD with 200" (issue 15). The body was
 * decoded with replacement characters and stored. Now a body that is not UTF-8 is refused with
 * 400 `invalid_utf8` naming the offset of the first bad byte, and nothing is written; a body
 * declared in another charset, or with a content coding, is refused with 415 (never read as
 * UTF-8).
 */
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { charsetOf, firstInvalidUtf8Offset } from "../../packages/server/src/server/json-body.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describe("firstInvalidUtf8Offset", () => {
  it("is -1 exactly for well-formed UTF-8, and the bytes before the offset are well-formed", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const offset = firstInvalidUtf8Offset(bytes);
        expect(offset === -1).toBe(isUtf8(bytes));
        if (offset >= 0) expect(isUtf8(bytes.subarray(0, offset))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it("finds overlong forms, surrogates, code points past U+10FFFF and cut sequences", () => {
    const at = (...bytes: number[]) => firstInvalidUtf8Offset(Uint8Array.from(bytes));
    expect(at(0x61, 0xc0, 0x80)).toBe(1); // overlong NUL
    expect(at(0x61, 0x62, 0xe0, 0x80, 0x80)).toBe(2); // overlong
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // U+D800
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
    expect(at(0x61, 0xe2, 0x82)).toBe(1); // cut at the end
    expect(at(0xe2, 0x82, 0xac, 0xff)).toBe(3);
    expect(at(0xf0, 0x9f, 0x98, 0x80)).toBe(-1);
  });

  it("reads the charset parameter of a Content-Type", () => {
    expect(charsetOf("application/json")).toBeUndefined();
    expect(charsetOf("application/json; charset=UTF-8")).toBe("utf-8");
    expect(charsetOf('application/json;Charset="iso-8859-1"')).toBe("iso-8859-1");
  });
});

describeEachDialect("invalid UTF-8 in a body", (getDatabase) => {
  let server: TestServer;
  let caller: { authorization: string };
  let conversationId: string;

  beforeAll(async () => {
    server = await testServer(getDatabase());
    const subject = uniqueName("subject");
    caller = await server.apiKeyFor(subject);
    const [message] = await new GatewayMessageStore(getDatabase()).appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "Run the job." }] }],
    });
    conversationId = message?.conversationId ?? "";
  });
  afterAll(async () => {
    await server.app.close();
  });

  const jobCount = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from background_agent_jobs`.execute(
          getDatabase().db,
        )
      ).rows[0]?.n,
    );

  const createJob = (payload: Buffer, contentType = "application/json", more = {}) =>
    server.app.inject({
      method: "POST",
      url: "/v1/background-agent-jobs",
      headers: { ...caller, "content-type": contentType, ...more },
      payload,
    });

  it("answers 400 invalid_utf8 naming the byte offset, and writes nothing", async () => {
    const before = await jobCount();
    const prefix = `{"conversation_id":"${conversationId}","metadata":{"note":"caf`;
    const payload = Buffer.concat([
      Buffer.from(prefix, "utf8"),
      Buffer.from([0xe9]), // "é" in Latin-1
      Buffer.from(`"}}`, "utf8"),
    ]);
    const reply = await createJob(payload);
    expect(reply.statusCode).toBe(400);
    const body = reply.json();
    expect(body.error.code).toBe("invalid_utf8");
    expect(body.error.where).toBe(`body at byte ${Buffer.byteLength(prefix)}`);
    expect(body.error.details).toEqual({ byte_offset: Buffer.byteLength(prefix) });
    expect(body.error.message).toContain("0xe9");
    expect(await jobCount()).toBe(before);
  });

  it("refuses a body declared in another charset with 415, never reads it as UTF-8", async () => {
    const before = await jobCount();
    const payload = Buffer.from(`{"conversation_id":"${conversationId}"}`, "latin1");
    for (const contentType of [
      "application/json; charset=iso-8859-1",
      "application/json; charset=utf-16",
      'application/json; charset="windows-1252"',
    ]) {
      const reply = await createJob(payload, contentType);
      expect(reply.statusCode, contentType).toBe(415);
      expect(reply.json().error.code).toBe("unsupported_media_type");
      expect(reply.json().error.where).toBe("Content-Type header");
    }
    const gzip = await createJob(payload, "application/json", { "content-encoding": "gzip" });
    expect(gzip.statusCode).toBe(415);
    expect(gzip.json().error.where).toBe("Content-Encoding header");
    expect(await jobCount()).toBe(before);
    // A request without a body is not concerned by its Content-Type.
    const read = await server.app.inject({
      method: "GET",
      url: "/v1/responses/msg_0000000000000000000000missing",
      headers: { ...caller, "content-type": "application/json; charset=iso-8859-1" },
    });
    expect(read.statusCode).toBe(404);
  });

  it("takes UTF-8 declared or not (charset=utf-8 in any case)", async () => {
    const payload = Buffer.from(
      `{"conversation_id":"${conversationId}","metadata":{"note":"café ✓"}}`,
      "utf8",
    );
    for (const contentType of ["application/json", "application/json; charset=UTF-8"]) {
      const reply = await createJob(payload, contentType);
      expect(reply.statusCode, contentType).toBe(200);
      expect(reply.json().metadata).toEqual({ note: "café ✓" });
    }
  });
});
