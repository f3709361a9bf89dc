/**
 * Errors as OpenAI's (issue 17): `{error: {message, type, param, code}}`, an upstream's 4xx
 * answered with its status (not 502), and a request that fails before the model answered
 * leaves no conversation and no row, so the `openai` client's retries leave no debris. The
 * upstream is a stub model: a local server speaking the Anthropic wire format, not Anthropic.
 */
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

describeEachDialect("Responses API errors", (getDatabase) => {
  let stubbed: StubbedServer;

  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
  });
  afterAll(async () => {
    await stubbed.close();
  });

  it("a refused field answers OpenAI's error shape: message, type, param and code", async () => {
    const reply = await stubbed.post("/responses", {
      model: "claude-e",
      input: "hi",
      tools: [{ type: "web_search" }],
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({
      type: "invalid_request_error",
      param: "tools[0]",
      code: "invalid_request",
    });
    expect(typeof reply.body.error.message).toBe("string");
    const unauthorized = await stubbed.post(
      "/responses",
      { model: "claude-e", input: "hi" },
      "vbk_wrong",
    );
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body.error).toMatchObject({ type: "authentication_error", param: null });
  });

  it("upstream 4xx regression: an upstream 400 is a 400 the client does not retry, and nothing is stored", async () => {
    const subject = uniqueName("refused");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const client = new OpenAI({ apiKey: key, baseURL: stubbed.baseUrl, maxRetries: 2 });
    const before = stubbed.stubs.anthropic.requests.length;
    stubbed.stubs.anthropic.script.push({ status: 400 });
    const error = await client.responses
      .create({ model: "claude-e", input: "hi" })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.code).toBe("upstream_invalid_request");
    expect(stubbed.stubs.anthropic.requests.length).toBe(before + 1);
    expect(await stubbed.rowCount(subject)).toBe(0);
  });

  it("retries leave no debris regression: three attempts at a failing upstream store no conversation and no row", async () => {
    const subject = uniqueName("retried");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const client = new OpenAI({ apiKey: key, baseURL: stubbed.baseUrl, maxRetries: 2 });
    const fallback = stubbed.stubs.anthropic.fallback;
    stubbed.stubs.anthropic.fallback = () => ({ status: 401 });
    try {
      const error = await client.responses
        .create({ model: "claude-e", input: "hi" })
        .catch((caught) => caught);
      expect(error.status).toBe(502);
      expect(error.type).toBe("server_error");
    } finally {
      stubbed.stubs.anthropic.fallback = fallback;
    }
    expect(await stubbed.rowCount(subject)).toBe(0);
    const conversations = await sql<{ n: number | string }>`
      select count(*) as n from ai_gateway_conversations where subject_uid = ${subject}`.execute(
      getDatabase().db,
    );
    expect(Number(conversations.rows[0]?.n)).toBe(0);
  });
});
