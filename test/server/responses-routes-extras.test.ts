/**
 * The Responses API routes besides create (issue 17), with the official `openai` client against
 * the real server on both databases: DELETE /v1/responses/:id (a tombstone),
 * GET /v1/responses/:id?stream=true (the stored response replayed as events, starting_after),
 * POST /v1/responses/input_tokens (Anthropic's count_tokens, or the documented estimate), and
 * GET /v1/models (the routed models).
 */
import { createServer, type Server } from "node:http";
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

/** An Anthropic upstream's count_tokens endpoint: 42 tokens, and the bodies it was sent. */
async function startCountTokens(): Promise<{
  url: string;
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const anthropic =
        request.url === "/v1/messages/count_tokens" &&
        request.headers["x-api-key"] === "sk-ant-count";
      const openai =
        request.url === "/v1/responses/input_tokens" &&
        request.headers["authorization"] === "Bearer sk-openai-count";
      if (!anthropic && !openai) {
        response.writeHead(404).end("{}");
        return;
      }
      bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify(
          anthropic ? { input_tokens: 42 } : { object: "response.input_tokens", input_tokens: 17 },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describeEachDialect("Responses API routes besides create", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let counter: Awaited<ReturnType<typeof startCountTokens>>;
  let server: TestServer;
  let counting: TestServer;
  let client: OpenAI;
  let other: OpenAI;
  let countingClient: OpenAI;

  async function listen(instance: TestServer): Promise<string> {
    await instance.app.listen({ host: "127.0.0.1", port: 0 });
    const address = instance.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    return `http://127.0.0.1:${port}/v1`;
  }

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    counter = await startCountTokens();
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
        GEMINI_API_KEY: "gemini-test",
        VERBATIM_MODEL_PROVIDERS:
          "claude-test=anthropic,claude*=anthropic,gemini*=gemini,gpt*=openai-responses",
      }),
    });
    const baseURL = await listen(server);
    client = new OpenAI({
      apiKey: (await server.apiKeyFor(uniqueName("s"))).key,
      baseURL,
      maxRetries: 0,
    });
    other = new OpenAI({
      apiKey: (await server.apiKeyFor(uniqueName("o"))).key,
      baseURL,
      maxRetries: 0,
    });
    counting = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-count",
        ANTHROPIC_BASE_URL: counter.url,
        OPENAI_API_KEY: "sk-openai-count",
        OPENAI_BASE_URL: `${counter.url}/v1`,
      }),
    });
    countingClient = new OpenAI({
      apiKey: (await counting.apiKeyFor(uniqueName("c"))).key,
      baseURL: await listen(counting),
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await server.app.close();
    await counting.app.close();
    await upstream.close();
    await counter.close();
  });

  async function statusOf(call: Promise<unknown>): Promise<number> {
    try {
      await call;
      return 200;
    } catch (error) {
      if (error instanceof OpenAI.APIError) return error.status ?? 0;
      throw error;
    }
  }

  it("DELETE /v1/responses/:id hides the response from its subject and keeps the row", async () => {
    const first = await client.responses.create({ model: "claude-test", input: "Keep me" });
    expect(await statusOf(other.responses.delete(first.id))).toBe(404);
    await client.responses.delete(first.id);
    expect(await statusOf(client.responses.retrieve(first.id))).toBe(404);
    expect(await statusOf(client.responses.inputItems.list(first.id))).toBe(404);
    expect(await statusOf(client.responses.delete(first.id))).toBe(404);
    expect(await statusOf(client.responses.cancel(first.id))).toBe(404);
    expect(
      await statusOf(
        client.post(`/responses/${first.id}/compress`, { body: { summary: "short" } }),
      ),
    ).toBe(404);
    // It can no longer be continued, and the refusal reaches no upstream.
    const sent = upstream.requests.length;
    expect(
      await statusOf(
        client.responses.create({
          model: "claude-test",
          input: "more",
          previous_response_id: first.id,
        }),
      ),
    ).toBe(404);
    expect(upstream.requests.length).toBe(sent);
    const rows = await sql<{ status: string }>`select status from ai_gateway_messages
      where id = ${first.id}`.execute(getDatabase().db);
    expect(rows.rows).toEqual([{ status: "completed" }]);
  });

  it("a response of a deleted conversation is not found", async () => {
    const response = await client.responses.create({ model: "claude-test", input: "Hi" });
    const conversationId = (response as unknown as { conversation_id: string }).conversation_id;
    await client.conversations.delete(conversationId);
    expect(await statusOf(client.responses.retrieve(response.id))).toBe(404);
  });

  it("GET /v1/responses/:id?stream=true replays the stored events; starting_after skips some", async () => {
    upstream.reply = () => ({
      text: "Calling.",
      toolCalls: [{ id: "toolu_1", name: "lookup", input: { q: "x" } }],
      stopReason: "tool_use",
    });
    const created = await client.responses.create({
      model: "claude-test",
      input: "Look it up",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
    });
    upstream.reply = (body) => ({ text: `You said: ${JSON.stringify(body["messages"]).length}` });
    const stream = await client.responses.retrieve(created.id, { stream: true });
    const events: { type: string; sequence_number: number }[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const completed = events[events.length - 1] as unknown as { response: unknown };
    // The stored response, as GET gives it (the client adds output_text to that one).
    const { output_text: _added, ...stored } = await client.responses.retrieve(created.id);
    expect(completed.response).toEqual(stored);

    const rest = await client.responses.retrieve(created.id, { stream: true, starting_after: 10 });
    const later: number[] = [];
    for await (const event of rest) later.push(event.sequence_number);
    expect(later).toEqual([11, 12]);
    // Another subject's id streams nothing: 404 as a missing one.
    expect(await statusOf(other.responses.retrieve(created.id, { stream: true }))).toBe(404);
  });

  it("GET ?stream=true of a response still in progress (background) stays open and ends with its final events", async () => {
    upstream.delayMs = 700;
    try {
      const started = await client.responses.create({
        model: "claude-test",
        input: "Take your time",
        background: true,
      });
      expect(started.status).toBe("in_progress");
      const stream = await client.responses.retrieve(started.id, { stream: true });
      const events: { type: string; sequence_number: number }[] = [];
      for await (const event of stream) events.push(event);
      expect(events.slice(0, 2).map((event) => event.type)).toEqual([
        "response.created",
        "response.in_progress",
      ]);
      expect(events.at(-1)?.type).toBe("response.completed");
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      const delta = events.find((event) => event.type === "response.output_text.delta") as
        { delta?: string } | undefined;
      const final = await client.responses.retrieve(started.id);
      expect(final.status).toBe("completed");
      expect(delta?.delta).toBe(final.output_text);
    } finally {
      upstream.delayMs = 0;
    }
  });

  it("POST /v1/responses/input_tokens asks Anthropic's count_tokens", async () => {
    const counted = await countingClient.responses.inputTokens.count({
      model: "claude-test",
      input: "How many tokens is this?",
      instructions: "Be brief.",
    });
    expect(counted).toMatchObject({
      object: "response.input_tokens",
      input_tokens: 42,
      verbatim_count: "upstream",
    });
    expect(counter.bodies[counter.bodies.length - 1]).toMatchObject({
      model: "claude-test",
      system: expect.anything(),
      messages: [{ role: "user" }],
    });
    expect(counter.bodies[counter.bodies.length - 1]).not.toHaveProperty("max_tokens");
    // System and developer input reaches the count as the system prompt, as it reaches a model.
    await countingClient.responses.inputTokens.count({
      model: "claude-test",
      input: [
        { role: "developer", content: "Use metric units." },
        { role: "user", content: "How far?" },
      ],
    });
    const withDeveloper = counter.bodies[counter.bodies.length - 1] as {
      system?: unknown;
      messages: unknown[];
    };
    expect(JSON.stringify(withDeveloper.system)).toContain("Use metric units.");
    expect(withDeveloper.messages).toHaveLength(1);
  });

  it("POST /v1/responses/input_tokens asks OpenAI's input_tokens for a model routed to the Responses API", async () => {
    const counted = await countingClient.responses.inputTokens.count({
      model: "gpt-test",
      input: [{ role: "user", content: "Count me" }],
      instructions: "Be brief.",
    });
    expect(counted).toMatchObject({ input_tokens: 17, verbatim_count: "upstream" });
    const sent = counter.bodies[counter.bodies.length - 1];
    expect(sent).toMatchObject({ model: "gpt-test", instructions: "Be brief." });
    expect(JSON.stringify(sent)).toContain("Count me");
    expect(sent).not.toHaveProperty("stream");
    expect(sent).not.toHaveProperty("max_output_tokens");
  });

  it("POST /v1/responses/input_tokens estimates where the upstream has no count (Gemini) and counts the context", async () => {
    const short = await client.responses.inputTokens.count({ model: "gemini-test", input: "hi" });
    expect(short).toMatchObject({ object: "response.input_tokens", verbatim_count: "estimate" });
    const long = await client.responses.inputTokens.count({
      model: "gemini-test",
      input: "hi ".repeat(400),
    });
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 250);
    const first = await client.responses.create({ model: "claude-test", input: "x".repeat(4000) });
    const continued = await client.responses.inputTokens.count({
      model: "gemini-test",
      input: "hi",
      previous_response_id: first.id,
    });
    expect(continued.input_tokens).toBeGreaterThan(short.input_tokens + 900);
    expect(
      await statusOf(
        other.responses.inputTokens.count({
          model: "gemini-test",
          input: "hi",
          previous_response_id: first.id,
        }),
      ),
    ).toBe(404);
  });

  it("POST /v1/responses/input_tokens counts a conversation's current chain; another subject's is not found", async () => {
    const alone = await client.responses.inputTokens.count({ model: "gemini-test", input: "hi" });
    const conversation = await client.conversations.create({
      items: [{ type: "message", role: "user", content: "y".repeat(4000) }],
    });
    const withConversation = await client.responses.inputTokens.count({
      model: "gemini-test",
      input: "hi",
      conversation: conversation.id,
    });
    expect(withConversation.input_tokens).toBeGreaterThan(alone.input_tokens + 900);
    expect(
      await statusOf(
        other.responses.inputTokens.count({
          model: "gemini-test",
          input: "hi",
          conversation: conversation.id,
        }),
      ),
    ).toBe(404);
  });

  it("the routes not served answer 405 at once (never retried, nothing stored): responses.compact, models.delete", async () => {
    const compact = client.responses.compact({ model: "claude-test", input: "Shorten this" });
    expect(await statusOf(compact)).toBe(405);
    expect(await statusOf(client.models.delete("claude-test"))).toBe(405);
  });

  it("GET /v1/models lists the routed models of configured providers; GET /v1/models/:id resolves a name", async () => {
    const listed = await client.models.list();
    expect(listed.data.map((model) => [model.id, model.owned_by])).toEqual([
      ["claude-test", "anthropic"],
    ]);
    const model = await client.models.retrieve("claude-sonnet-5");
    expect(model).toEqual({
      id: "claude-sonnet-5",
      object: "model",
      created: 0,
      owned_by: "anthropic",
    });
    // gpt* goes to a provider with no key: not routed here.
    expect(await statusOf(client.models.retrieve("gpt-5"))).toBe(404);
    expect(await statusOf(client.models.retrieve("unknown-model"))).toBe(404);
  });
});
