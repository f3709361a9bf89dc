/**
 * Regression: "Upstream error text passes through unchanged to the caller and the database (key
 * fragments, host names)" (issue 15). Provider keys, key fragments, URLs with credentials and
 * the configured upstream's location are scrubbed (the trajectory sanitizer's rules and a few
 * more) before an error is returned, streamed or stored.
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

const CONFIGURED_KEY = "configured-upstream-key-0123456789";
const ANTHROPIC_KEY = `sk-ant-api03-${"A".repeat(40)}`;
const OPENAI_KEY = `sk-proj-${"b".repeat(40)}`;
const MASKED = "sk-proj-********************************wxyz";
const CREDENTIALS = "https://svc-user:hunter2-secret@proxy.example.internal:8443/v1";

describeEachDialect("upstream errors are scrubbed", (getDatabase) => {
  let upstream: ControlledUpstream;
  let server: TestServer;
  let alice: { authorization: string };
  let aliceSubject: string;
  let host: string;

  beforeAll(async () => {
    upstream = await startControlledUpstream();
    host = new URL(upstream.url).host;
    server = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: CONFIGURED_KEY,
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        maxRetries: 0,
        timeoutMs: 2000,
      },
    });
    aliceSubject = uniqueName("alice");
    alice = await server.apiKeyFor(aliceSubject);
    upstream.answer = (writer) =>
      writer.error(
        401,
        `invalid x-api-key ${CONFIGURED_KEY} (also ${ANTHROPIC_KEY}, ${OPENAI_KEY}); ` +
          `Incorrect API key provided: ${MASKED}; via ${CREDENTIALS} from ${upstream.url}/v1/messages`,
      );
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  const secrets = () => [
    CONFIGURED_KEY,
    ANTHROPIC_KEY,
    OPENAI_KEY,
    MASKED,
    "hunter2-secret",
    "svc-user",
    host,
  ];
  const expectScrubbed = (text: string) => {
    for (const secret of secrets()) expect(text, secret).not.toContain(secret);
  };
  const storedError = async (id: string) =>
    (
      await sql<{
        metadata: string;
      }>`select metadata from ai_gateway_messages where id = ${id}`.execute(getDatabase().db)
    ).rows[0]?.metadata ?? "";

  it("the plain reply holds no key, key fragment, credential or upstream host; a failure before any answer stores nothing (issue 17)", async () => {
    const reply = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "hi" },
    });
    expect(reply.statusCode).toBe(502);
    expectScrubbed(reply.body);
    expect(reply.json().error.message).toContain("[redacted:");
    expect(reply.json().error.message).toContain("proxy.example.internal");
    const stored = await sql<{ count: number | string }>`
      select count(*) as count from ai_gateway_messages
      where subject_uid = ${aliceSubject}`.execute(getDatabase().db);
    expect(Number(stored.rows[0]?.count)).toBe(0);
  });

  it("the streamed request's error reply holds none either (it failed before the stream began)", async () => {
    const reply = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "hi", stream: true },
    });
    expect(reply.statusCode).toBe(502);
    expect(reply.body).toContain("[redacted:");
    expectScrubbed(reply.body);
  });

  it("a failed model call for a summary (compress) holds none either", async () => {
    const answer = upstream.answer;
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("fine");
      writer.end();
    };
    const created = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "hi" },
    });
    expect(created.statusCode).toBe(200);
    upstream.answer = answer;
    const reply = await server.app.inject({
      method: "POST",
      url: `/v1/responses/${created.json().id}/compress`,
      headers: alice,
      payload: { model: "claude-test" },
    });
    expect(reply.statusCode).toBeGreaterThanOrEqual(400);
    expect(reply.body).toContain("invalid x-api-key");
    expectScrubbed(reply.body);
  });

  it("a connection failure names no upstream host", async () => {
    const closed = await startControlledUpstream();
    const url = closed.url;
    await closed.close();
    const unreachable = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({ ANTHROPIC_API_KEY: CONFIGURED_KEY, ANTHROPIC_BASE_URL: url }),
        maxRetries: 0,
        timeoutMs: 2000,
      },
    });
    try {
      const bob = await unreachable.apiKeyFor(uniqueName("bob"));
      const reply = await unreachable.app.inject({
        method: "POST",
        url: "/v1/responses",
        headers: bob,
        payload: { model: "claude-test", input: "hi" },
      });
      expect(reply.statusCode).toBe(502);
      expect(reply.body).not.toContain(new URL(url).host);
      expectScrubbed(reply.body);
    } finally {
      await unreachable.app.close();
    }
  });
});
