/**
 * Regression: "Inconsistent field checks" (issue 15). A lone surrogate was accepted in a tool
 * name but refused in `instructions`, and `metadata {"__proto__": "x"}` was answered 200 with
 * the pair silently dropped. Every field now follows the one stored-text rule
 * (src/core/stored-text.ts): the same refusal for each, before the model is called or anything
 * is written, and a key that cannot be kept is refused, never dropped.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

const MODEL = "claude-sonnet-4-5";

/** A request with `text` put in one field; `where` is the field as the refusal names it. */
function fieldCases(text: string): { field: string; body: Record<string, unknown> }[] {
  const tool = { type: "function", name: "lookup", description: "Looks up", parameters: {} };
  return [
    { field: "body.model", body: { model: `${MODEL}${text}`, input: "Hi" } },
    { field: "body.input", body: { model: MODEL, input: text } },
    {
      field: "body.input[0].content",
      body: { model: MODEL, input: [{ role: "user", content: text }] },
    },
    {
      field: "body.input[0].content[0].text",
      body: { model: MODEL, input: [{ role: "user", content: [{ type: "input_text", text }] }] },
    },
    {
      field: "body.input[1].arguments",
      body: {
        model: MODEL,
        input: [
          { role: "user", content: "Hi" },
          { type: "function_call", call_id: "call_1", name: "lookup", arguments: text },
          { type: "function_call_output", call_id: "call_1", output: "ok" },
        ],
      },
    },
    {
      field: "body.input[2].output",
      body: {
        model: MODEL,
        input: [
          { role: "user", content: "Hi" },
          { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output: text },
        ],
      },
    },
    { field: "body.instructions", body: { model: MODEL, input: "Hi", instructions: text } },
    {
      field: "body.tools[0].name",
      body: { model: MODEL, input: "Hi", tools: [{ ...tool, name: `lookup${text}` }] },
    },
    {
      field: "body.tools[0].description",
      body: { model: MODEL, input: "Hi", tools: [{ ...tool, description: text }] },
    },
    {
      field: "body.tools[0].parameters.properties.query.description",
      body: {
        model: MODEL,
        input: "Hi",
        tools: [
          {
            ...tool,
            parameters: {
              type: "object",
              properties: { query: { type: "string", description: text } },
            },
          },
        ],
      },
    },
    {
      field: "body.metadata.team",
      body: { model: MODEL, input: "Hi", metadata: { team: text } },
    },
    { field: "body.user", body: { model: MODEL, input: "Hi", user: text } },
  ];
}

describeEachDialect("inconsistent field checks", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let caller: { authorization: string };
  let subject: string;
  let responseId: string;
  let conversationId: string;

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    server = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        timeoutMs: 2000,
        maxRetries: 0,
      },
    });
    subject = uniqueName("subject");
    caller = await server.apiKeyFor(subject);
    upstream.reply = () => ({ text: "Fine." });
    const first = await send("/v1/responses", { model: MODEL, input: "Hello" });
    expect(first.statusCode).toBe(200);
    responseId = first.json().id;
    conversationId = first.json().conversation_id;
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  /** Sent as JSON text, so a `__proto__` key arrives as JSON carries it. */
  const send = (url: string, body: unknown) =>
    server.app.inject({
      method: "POST",
      url,
      headers: { ...caller, "content-type": "application/json" },
      payload: typeof body === "string" ? body : JSON.stringify(body),
    });
  const messageRows = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
          getDatabase().db,
        )
      ).rows[0]?.n,
    );

  it("a lone surrogate or a NUL gets the same refusal in every field of a response request, before the model is called", async () => {
    const rows = await messageRows();
    const calls = upstream.requests.length;
    for (const [problem, text] of [
      ["lone surrogate", "\ud800"],
      ["lone surrogate", "x\udc00y"],
      ["NUL", "a\u0000b"],
    ] as const) {
      for (const { field, body } of fieldCases(text)) {
        const reply = await send("/v1/responses", body);
        const error = reply.json().error ?? {};
        expect({
          field,
          text,
          status: reply.statusCode,
          code: error.code,
          where: error.where,
        }).toEqual({
          field,
          text,
          status: 400,
          code: "invalid_request",
          where: field,
        });
        expect(error.message).toContain(problem === "NUL" ? "U+0000 (NUL)" : "lone surrogate");
        expect(error.hint).toContain("nothing was written");
      }
    }
    expect(upstream.requests.length).toBe(calls);
    expect(await messageRows()).toBe(rows);
  });

  it('metadata {"__proto__": "x"} is refused, never dropped, on every route that takes metadata', async () => {
    const rows = await messageRows();
    const calls = upstream.requests.length;
    const proto = '{"__proto__":"x"}';
    const replies = {
      responses: await send(
        "/v1/responses",
        `{"model":"${MODEL}","input":"Hi","metadata":${proto}}`,
      ),
      compress: await send(
        `/v1/responses/${responseId}/compress`,
        `{"summary":"They greeted.","metadata":${proto}}`,
      ),
      jobs: await send(
        "/v1/background-agent-jobs",
        `{"conversation_id":"${conversationId}","metadata":${proto}}`,
      ),
      toolParameters: await send(
        "/v1/responses",
        `{"model":"${MODEL}","input":"Hi","tools":[{"type":"function","name":"f","parameters":{"properties":${proto}}}]}`,
      ),
    };
    for (const [route, reply] of Object.entries(replies)) {
      expect({ route, status: reply.statusCode }).toEqual({ route, status: 400 });
      expect(reply.json().error.message).toContain('"__proto__"');
      expect(reply.json().error.where).toMatch(/\.__proto__$/);
    }
    expect(upstream.requests.length).toBe(calls);
    expect(await messageRows()).toBe(rows);
  });

  it("an id field of a body that breaks the rule names nothing: 404 like a missing id, not 400", async () => {
    const rows = await messageRows();
    const calls = upstream.requests.length;
    const replies = [
      await send("/v1/responses", {
        model: MODEL,
        input: "Hi",
        previous_response_id: "msg_\u0000",
      }),
      await send("/v1/background-agent-jobs", { conversation_id: "conv_\ud800" }),
      await send("/v1/background-agent-jobs/wake-events/claim", {
        conversation_id: "conv_\u0000",
        consumer: "worker",
      }),
    ];
    for (const reply of replies) {
      expect(reply.statusCode).toBe(404);
      expect(reply.json().error.where).toMatch(/^body\.[a-z_]*id$/);
    }
    expect(upstream.requests.length).toBe(calls);
    expect(await messageRows()).toBe(rows);
  });

  it("the store applies the same rule to every field when called as a library, before any write", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const rows = await messageRows();
    const user = (text: string) => ({
      role: "user" as const,
      content: [{ type: "text" as const, text }],
    });
    const settings = (tools: Record<string, unknown>[], instructions: string | null = null) => ({
      instructions,
      tools,
      maxOutputTokens: null,
    });
    const attempts: { where: string; code: string; write: () => Promise<unknown> }[] = [
      {
        where: "messages[0].content[0].text",
        code: "gateway_input_invalid",
        write: () =>
          store.appendMessages(subject, { previousMessageId: null, messages: [user("a\u0000")] }),
      },
      {
        where: "messages[0].request.tools[0].name",
        code: "gateway_input_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            messages: [
              { ...user("Hi"), request: settings([{ type: "function", name: "f\ud800" }]) },
            ],
          }),
      },
      {
        where: "messages[0].request.instructions",
        code: "gateway_input_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            messages: [{ ...user("Hi"), request: settings([], "be \ud800 brief") }],
          }),
      },
      {
        where: "messages[0].request.tools[0].parameters.__proto__",
        code: "gateway_input_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            messages: [
              {
                ...user("Hi"),
                request: settings([
                  { type: "function", name: "f", parameters: JSON.parse(proto()) },
                ]),
              },
            ],
          }),
      },
      {
        where: "messages[0].metadata.__proto__",
        code: "gateway_metadata_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            messages: [{ ...user("Hi"), metadata: JSON.parse(proto()) }],
          }),
      },
      {
        where: "conversationMetadata.team",
        code: "gateway_metadata_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            conversationMetadata: { team: "a\u0000" },
            messages: [user("Hi")],
          }),
      },
      {
        where: "messages[0].gateway.model",
        code: "gateway_metadata_invalid",
        write: () =>
          store.appendMessages(subject, {
            previousMessageId: null,
            messages: [{ role: "assistant", content: [], gateway: { model: "m\u0000" } }],
          }),
      },
    ];
    for (const attempt of attempts) {
      await expect(attempt.write(), attempt.where).rejects.toMatchObject({
        code: attempt.code,
        where: attempt.where,
      });
    }
    expect(await messageRows()).toBe(rows);
  });
});

function proto(): string {
  return '{"__proto__":"x"}';
}
