/**
 * Regression: "Answers the store refuses leave a response in_progress forever" (issue 15). An
 * upstream text or error with a lone surrogate, an error message cut inside a surrogate pair at
 * the length limit, a model name over the limit, an answer over the size limit: every started
 * response ends completed, incomplete or failed, what cannot be stored as sent is repaired or
 * recorded as the failure's reason, and the reply says what was stored.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  startControlledUpstream,
  type ControlledUpstream,
} from "../support/controlled-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("answers the store refuses", (getDatabase) => {
  let upstream: ControlledUpstream;
  let server: TestServer;
  let alice: { authorization: string };

  beforeAll(async () => {
    upstream = await startControlledUpstream();
    server = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        maxRetries: 0,
        timeoutMs: 2000,
      },
    });
    alice = await server.apiKeyFor(uniqueName("alice"));
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  const create = (payload: Record<string, unknown>) =>
    server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "hi", ...payload },
    });
  const storedRow = async (id: string) =>
    (
      await sql<{ status: string; content: string; metadata: string }>`
        select status, content, metadata from ai_gateway_messages where id = ${id}`.execute(
        getDatabase().db,
      )
    ).rows[0];
  const latestResponseRow = async () =>
    (
      await sql<{ id: string; status: string; metadata: string }>`
        select id, status, metadata from ai_gateway_messages
        where type = 'assistant' order by created_at desc, id desc limit 1`.execute(
        getDatabase().db,
      )
    ).rows[0];
  const continues = async (id: string) => {
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("again");
      writer.end();
    };
    const next = await create({ input: "and now?", previous_response_id: id });
    expect(next.statusCode, next.body).toBe(200);
  };

  it("an upstream text with lone surrogates and a NUL is stored with U+FFFD in their place (plain and streamed)", async () => {
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("a\ud800b");
      writer.text(" c\udfff\u0000");
      writer.end();
    };
    const reply = await create({});
    expect(reply.statusCode, reply.body).toBe(200);
    const response = reply.json();
    expect(response.status).toBe("completed");
    expect(response.output[0].content[0].text).toBe("a\ufffdb c\ufffd\ufffd");
    expect((await storedRow(response.id))?.status).toBe("completed");
    await continues(response.id);

    const streamed = await create({ stream: true });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toContain("event: response.completed");
    expect(streamed.body).not.toContain("response.failed");
    const row = await latestResponseRow();
    expect(row?.status).toBe("completed");
  });

  it("an upstream error with a lone surrogate ends the response failed; the reply says the input was stored", async () => {
    // An error after the model began answering (before it, nothing is stored: issue 17).
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.streamError("bad \udc00 request");
    };
    const reply = await create({});
    expect(reply.statusCode, reply.body).toBe(502);
    const error = reply.json().error;
    expect(error.code).toBe("upstream_failed");
    expect(error.message).toContain("bad \ufffd request");
    expect(JSON.stringify(error)).not.toContain("nothing was written");
    expect(error.hint).toContain("were stored");
    const row = await storedRow(error.where);
    expect(row?.status).toBe("failed");
    expect(JSON.parse(row?.metadata ?? "{}").gateway.error.message).toContain("bad \ufffd request");
    await continues(error.where);
  });

  it("an upstream error cut inside a surrogate pair at the length limit is cut before the pair", async () => {
    const prefix = "Anthropic stream error: ";
    const message = "x".repeat(4000 - prefix.length - 1) + "😀".repeat(10);
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.streamError(message);
    };
    const reply = await create({});
    expect(reply.statusCode, reply.body).toBe(502);
    const id = reply.json().error.where as string;
    const row = await storedRow(id);
    expect(row?.status).toBe("failed");
    const stored = JSON.parse(row?.metadata ?? "{}").gateway.error.message as string;
    expect(stored).toBe(prefix + "x".repeat(4000 - prefix.length - 1));
    await continues(id);
  });

  it("a model name over the limit is cut to 200 characters and the response completes", async () => {
    upstream.answer = (writer) => {
      writer.start("m".repeat(300));
      writer.text("fine");
      writer.end();
    };
    const reply = await create({});
    expect(reply.statusCode, reply.body).toBe(200);
    expect(reply.json().status).toBe("completed");
    expect(reply.json().model).toBe("m".repeat(200));
    expect((await storedRow(reply.json().id))?.status).toBe("completed");
  });

  it("an answer larger than a message may be ends the response failed with the refusal as its reason", async () => {
    upstream.answer = (writer) => {
      writer.start("claude-test");
      for (let index = 0; index < 5; index++) writer.text("y".repeat(1024 * 1024));
      writer.end();
    };
    const reply = await create({});
    expect(reply.statusCode, reply.body).toBe(502);
    const error = reply.json().error;
    expect(error.message).toContain("could not be stored");
    const row = await storedRow(error.where);
    expect(row?.status).toBe("failed");
    expect(JSON.parse(row?.metadata ?? "{}").gateway.error.message).toContain(
      "could not be stored",
    );
    const read = await server.app.inject({
      method: "GET",
      url: `/v1/responses/${error.where}`,
      headers: alice,
    });
    expect(read.json().status).toBe("failed");
    await continues(error.where);
  });

  it("no response is left in_progress", async () => {
    const left = await sql<{ n: number }>`
      select count(*) as n from ai_gateway_messages where status = 'in_progress'`.execute(
      getDatabase().db,
    );
    expect(Number(left.rows[0]?.n)).toBe(0);
  });
});
