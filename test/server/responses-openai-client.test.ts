/**
 * The official `openai` npm client, pointed at the server (baseURL), creates responses, chains
 * them with previous_response_id, streams, and reads input items. The upstream is a local
 * server speaking the Anthropic Messages wire format (test/support/anthropic-upstream.ts), so
 * the whole path runs: client → server → gateway store → provider renderer → upstream → back.
 */
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("Responses API with the openai client", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let client: OpenAI;
  let subject: string;

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    subject = uniqueName("subject");
    const { key } = await server.apiKeyFor(subject);
    client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  it("B2 B3 B4 creates a response, chains it with previous_response_id, and stores every message", async () => {
    const first = await client.responses.create({
      model: "claude-test",
      input: "Hello there",
      instructions: "Be brief.",
      metadata: { ticket: "T-1" },
      max_output_tokens: 300,
    });
    expect(first.status).toBe("completed");
    expect(first.output_text).toBe("You said: Hello there");
    expect(first.metadata).toEqual({ ticket: "T-1" });
    expect(first.usage?.output_tokens).toBe(15);

    const second = await client.responses.create({
      model: "claude-test",
      input: [{ role: "user", content: "And again" }],
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe("You said: And again");

    // The upstream saw the whole model-visible context, and no stored id.
    const sent = upstream.requests[upstream.requests.length - 1] as {
      messages: unknown[];
      system?: unknown;
    };
    expect(sent.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hello there" }] },
      { role: "assistant", content: [{ type: "text", text: "You said: Hello there" }] },
      {
        role: "user",
        content: [{ type: "text", text: "And again", cache_control: { type: "ephemeral" } }],
      },
    ]);
    expect(JSON.stringify(sent)).not.toContain(first.id);

    // Every input and output message is a row of ai_gateway_messages, chained.
    const rows = await sql<{
      id: string;
      role: string;
      previous_message_id: string | null;
      status: string;
    }>`
      select id, role, previous_message_id, status from ai_gateway_messages
      where subject_uid = ${subject} and conversation_id = (
        select conversation_id from ai_gateway_messages where id = ${second.id})
      order by depth`.execute(getDatabase().db);
    expect(rows.rows.map((row) => [row.role, row.status])).toEqual([
      ["user", "completed"],
      ["assistant", "completed"],
      ["user", "completed"],
      ["assistant", "completed"],
    ]);
    expect(rows.rows[1]?.id).toBe(first.id);
    expect(rows.rows[2]?.previous_message_id).toBe(first.id);
    expect(rows.rows[3]?.id).toBe(second.id);

    const read = await client.responses.retrieve(second.id);
    expect(read.id).toBe(second.id);
    expect(read.previous_response_id).toBe(first.id);
    expect(read.output_text).toBe("You said: And again");
    // A stored response gives back the settings it was created with (not carried over to the
    // next response, as in the Responses API).
    const firstRead = await client.responses.retrieve(first.id);
    expect(firstRead.instructions).toBe("Be brief.");
    expect(firstRead.tools).toEqual([]);
    expect(firstRead.max_output_tokens).toBe(300);
    expect(read.instructions).toBeNull();
    expect(read.max_output_tokens).toBeNull();
  });

  it("B2 streams a response as Responses API events", async () => {
    const stream = await client.responses.create({
      model: "claude-test",
      input: "stream this please",
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    let completedId = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completedId = event.response.id;
    }
    expect(text).toBe("You said: stream this please");
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.output_text.done");
    expect(types[types.length - 1]).toBe("response.completed");
    const stored = await client.responses.retrieve(completedId);
    expect(stored.output_text).toBe("You said: stream this please");
  });

  it("B2 B10 tool calls round-trip: function_call out, function_call_output in, aliased for the model", async () => {
    upstream.reply = () => ({
      toolCalls: [{ id: "toolu_01Weather", name: "get_weather", input: { city: "Oslo" } }],
    });
    const asked = await client.responses.create({
      model: "claude-test",
      input: "Weather in Oslo?",
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Weather by city",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          strict: false,
        },
      ],
    });
    const retrieved = await client.responses.retrieve(asked.id);
    expect(retrieved.tools).toEqual(asked.tools);
    expect(retrieved.tools).toEqual([
      {
        type: "function",
        name: "get_weather",
        description: "Weather by city",
        parameters: { type: "object", properties: { city: { type: "string" } } },
        strict: false,
      },
    ]);
    const call = asked.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({
      type: "function_call",
      call_id: "toolu_01Weather",
      name: "get_weather",
    });
    expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: "Oslo" });

    upstream.reply = () => ({ text: "It is sunny in Oslo." });
    const answered = await client.responses.create({
      model: "claude-test",
      previous_response_id: asked.id,
      input: [
        { type: "function_call_output", call_id: "toolu_01Weather", output: '{"sky":"sunny"}' },
      ],
    });
    expect(answered.output_text).toBe("It is sunny in Oslo.");
    const sent = JSON.stringify(upstream.requests[upstream.requests.length - 1]);
    expect(sent).toContain('"tool_use_id":"call_1"');
    expect(sent).toContain('"id":"call_1"');
    expect(sent).not.toContain("toolu_01Weather");

    const items = await client.responses.inputItems.list(answered.id, { order: "asc" });
    expect(items.data).toEqual([
      expect.objectContaining({
        type: "function_call_output",
        call_id: "toolu_01Weather",
        output: '{"sky":"sunny"}',
      }),
    ]);
    upstream.reply = (body) => ({
      text: `You said: ${JSON.stringify(body).length > 0 ? "ok" : ""}`,
    });
  });

  it("B4 lists a response's input items (the openai client's pagination)", async () => {
    upstream.reply = () => ({ text: "noted" });
    const response = await client.responses.create({
      model: "claude-test",
      input: [
        { role: "user", content: "one" },
        { role: "assistant", content: "two" },
        { role: "user", content: [{ type: "input_text", text: "three" }] },
      ],
    });
    const items = [];
    for await (const item of client.responses.inputItems.list(response.id, { order: "asc" }))
      items.push(item);
    expect(items.map((item) => (item.type === "message" ? item.role : item.type))).toEqual([
      "user",
      "assistant",
      "user",
    ]);
    const desc = await client.responses.inputItems.list(response.id);
    expect(desc.data.map((item) => item.id)).toEqual(items.map((item) => item.id).reverse());
  });
});
