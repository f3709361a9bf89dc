/**
 * Issue 18: the calls of /v1/messages and /v1/chat/completions are also written as gateway
 * messages (the provider-neutral history /v1/responses keeps), so one recorded chain is one
 * gateway conversation whose messages are its messages: the subject's Conversations API and the
 * console list them. The answer a client sends back is the stored answer, not a second copy;
 * the raw bytes stay in the call's row. With the official `@anthropic-ai/sdk` and `openai`
 * clients, JSON and streamed, a tool turn included, on SQLite and PostgreSQL.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import type { RawUpstream } from "../support/raw-upstream.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";
import type { TestServer } from "../support/server.js";

interface Item {
  readonly type: string;
  readonly role?: string;
  readonly content?: { readonly text: string }[];
  readonly call_id?: string;
  readonly output?: string;
}

describeEachDialect("recorded calls as gateway messages", (getDatabase) => {
  let upstream: RawUpstream;
  let server: TestServer;
  let baseUrl: string;
  let started: RawUpstreamServer;

  beforeAll(async () => {
    started = await startRawUpstreamServer(getDatabase());
    ({ upstream, server, baseUrl } = started);
  });
  afterAll(async () => {
    await started.close();
  });

  async function get(path: string, authorization: string): Promise<any> {
    const response = await fetch(`${baseUrl}${path}`, { headers: { authorization } });
    expect(response.status, path).toBe(200);
    return response.json();
  }

  /** The one recorded conversation of a subject and its items, oldest first. */
  async function itemsOf(subject: string, key: string): Promise<{ id: string; items: Item[] }> {
    await callsPlaced(getDatabase(), subject);
    const rows = await getDatabase()
      .db.selectFrom("ai_gateway_recorded_calls")
      .select("conversation_id")
      .where("subject_uid", "=", subject)
      .execute();
    const conversations = new Set(rows.map((row) => row.conversation_id));
    expect(conversations.size).toBe(1);
    const [id] = [...conversations] as [string];
    const list = await get(`/v1/conversations/${id}/items?order=asc&limit=100`, `Bearer ${key}`);
    return { id, items: list.data as Item[] };
  }

  /** The subject's gateway messages form one chain: each continues the one before. */
  async function expectOneChain(subject: string): Promise<void> {
    await callsPlaced(getDatabase(), subject);
    const rows = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select(["id", "previous_message_id", "depth"])
      .where("subject_uid", "=", subject)
      .orderBy("depth")
      .execute();
    rows.forEach((row, index) => {
      expect(row.previous_message_id).toBe(index === 0 ? null : rows[index - 1]?.id);
    });
  }

  const textOf = (item: Item | undefined) => item?.content?.map((part) => part.text).join("");

  it("Anthropic Messages (JSON, streamed, a tool turn): one conversation of gateway messages, answers not stored twice", async () => {
    const subject = uniqueName("record-messages");
    const { key } = await server.apiKeyFor(subject);
    const client = new Anthropic({ apiKey: key, baseURL: baseUrl, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [
      { name: "Bash", description: "run", input_schema: { type: "object", properties: {} } },
    ];
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Hello" }];
    const first = await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: history,
    });
    history.push(
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "text", text: "Run it" }] },
    );
    upstream.bashCommand = "echo hi";
    const call = await client.messages
      .stream({ model: "claude-test", max_tokens: 100, messages: history, tools })
      .finalMessage();
    upstream.bashCommand = undefined;
    const toolUse = call.content.find((block) => block.type === "tool_use");
    expect(toolUse).toBeDefined();
    history.push(
      { role: "assistant", content: call.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: toolUse?.id ?? "", content: "hi" }],
      },
    );
    await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: history,
      tools,
    });

    const { id, items } = await itemsOf(subject, key);
    expect(items.map((item) => `${item.type}:${item.role ?? ""}`)).toEqual([
      "message:user",
      "message:assistant",
      "message:user",
      "function_call:",
      "function_call_output:",
      "message:assistant",
    ]);
    expect(textOf(items[0])).toBe("Hello");
    expect(textOf(items[1])).toBe("stub answer");
    expect(items[4]).toMatchObject({ call_id: toolUse?.id, output: "hi" });
    await expectOneChain(subject);
    // The console shows the same messages; the raw bytes stay in the calls' rows.
    const console = await get(
      `/ai-gateway/conversations/${id}/messages`,
      server.operator.authorization,
    );
    expect(JSON.stringify(console)).toContain("Run it");
    const calls = await recordedCallRows(getDatabase(), subject);
    expect(calls).toHaveLength(3);
    expect(JSON.parse(calls[2]?.requestText ?? "{}").messages).toEqual(history);
  });

  it("Chat Completions (system message, JSON and streamed): one conversation, the system message kept as such", async () => {
    const subject = uniqueName("record-chat");
    const { key } = await server.apiKeyFor(subject);
    const client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ];
    const first = await client.chat.completions.create({ model: "gpt-test", messages });
    messages.push(
      { role: "assistant", content: first.choices[0]?.message.content ?? "" },
      { role: "user", content: "Again" },
    );
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      messages,
      stream: true,
    });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    expect(streamed).not.toBe("");

    const { items } = await itemsOf(subject, key);
    expect(items.map((item) => `${item.type}:${item.role ?? ""}`)).toEqual([
      "message:system",
      "message:user",
      "message:assistant",
      "message:user",
      "message:assistant",
    ]);
    expect(textOf(items[4])).toBe(streamed);
    await expectOneChain(subject);
  });
});
