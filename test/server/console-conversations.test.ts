import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("console: conversations", (getDatabase) => {
  let server: TestServer;
  let subject: string;
  let conversationId: string;
  let ids: string[];

  beforeAll(async () => {
    server = await testServer(getDatabase());
    subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const messages = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "What is the weather in Oslo?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            {
              type: "toolCall",
              id: "toolu_01Secret",
              name: "get_weather",
              arguments: '{"city":"Oslo"}',
            },
          ],
          gateway: {
            model: "claude-test",
            provider: "anthropic",
            providerResponseId: "msg_01Provider",
          },
        },
        {
          role: "tool",
          content: [
            {
              type: "toolResult",
              callID: "toolu_01Secret",
              toolName: "get_weather",
              isError: false,
              content: "sunny",
            },
          ],
        },
        { role: "assistant", content: [{ type: "text", text: "It is sunny. ".repeat(400) }] },
      ],
    });
    ids = messages.map((message) => message.id);
    conversationId = messages[0]?.conversationId ?? "";
  });
  afterAll(async () => {
    await server.app.close();
  });

  const get = (url: string) => server.app.inject({ method: "GET", url, headers: server.operator });

  it("B14 lists conversations with their subject and message count", async () => {
    const reply = await get(`/ai-gateway/conversations?subject_uid=${subject}`);
    expect(reply.statusCode).toBe(200);
    expect(reply.json().data).toEqual([
      expect.objectContaining({ id: conversationId, subject_uid: subject, message_count: 4 }),
    ]);
    expect(reply.json().next_cursor).toBeNull();
  });

  it("B14 B3 view=stored returns the rows with the columns of B3", async () => {
    const reply = await get(`/ai-gateway/conversations/${conversationId}/messages`);
    expect(reply.statusCode).toBe(200);
    const body = reply.json();
    expect(body.view).toBe("stored");
    expect(body.messages.map((message: { id: string }) => message.id)).toEqual(ids);
    expect(body.messages[1]).toMatchObject({
      subject_uid: subject,
      conversation_id: conversationId,
      type: "assistant",
      role: "assistant",
      status: "completed",
      previous_message_id: ids[0],
      metadata: {
        caller: {},
        gateway: { model: "claude-test", providerResponseId: "msg_01Provider" },
      },
    });
  });

  it("B9 B10 B15 view=chatml projects to canonical ChatML with execution_mechanism on tool results", async () => {
    const reply = await get(`/ai-gateway/conversations/${conversationId}/messages?view=chatml`);
    const { messages } = reply.json();
    expect(messages[1]).toEqual({
      role: "assistant",
      content: "Let me look.",
      tool_calls: [
        {
          id: "toolu_01Secret",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
        },
      ],
    });
    expect(messages[2]).toMatchObject({
      role: "tool",
      tool_call_id: "toolu_01Secret",
      metadata: { execution_mechanism: "local_dynamic" },
    });
  });

  it("B2 B12 view=model-visible strips every stored id and aliases tool calls", async () => {
    const reply = await get(
      `/ai-gateway/conversations/${conversationId}/messages?view=model-visible`,
    );
    const body = reply.json();
    expect(body.anchor).toBe(ids[3]);
    const text = JSON.stringify(body.messages);
    for (const stored of [...ids, conversationId, "toolu_01Secret", "msg_01Provider"]) {
      expect(text).not.toContain(stored);
    }
    expect(body.messages[1].tool_calls[0].id).toBe("call_1");
    expect(body.messages[2].tool_call_id).toBe("call_1");
    expect(body.metadata).toEqual({ redacted: false, content_truncated: false });
  });

  it("B12 a page over its byte limit cuts the longest content and sets content_truncated", async () => {
    const reply = await get(
      `/ai-gateway/conversations/${conversationId}/messages?view=chatml&page_limit_bytes=2048`,
    );
    expect(reply.statusCode).toBe(200);
    const body = reply.json();
    expect(body.metadata.content_truncated).toBe(true);
    expect(
      Buffer.byteLength(JSON.stringify({ messages: body.messages, metadata: body.metadata })),
    ).toBeLessThanOrEqual(2048);
    expect(body.messages[0].content).toBe("What is the weather in Oslo?");
    expect(body.messages[3].content.length).toBeLessThan(5200);
  });

  it("B14 pages with limit and next_cursor, and reads the context of an anchor", async () => {
    const first = (
      await get(`/ai-gateway/conversations/${conversationId}/messages?limit=3`)
    ).json();
    expect(first.messages).toHaveLength(3);
    const second = (
      await get(
        `/ai-gateway/conversations/${conversationId}/messages?limit=3&cursor=${first.next_cursor}`,
      )
    ).json();
    expect(second.messages.map((message: { id: string }) => message.id)).toEqual([ids[3]]);
    expect(second.next_cursor).toBeNull();
    const context = (
      await get(`/ai-gateway/conversations/${conversationId}/messages?anchor=${ids[1]}`)
    ).json();
    expect(context.messages.map((message: { id: string }) => message.id)).toEqual([ids[0], ids[1]]);
  });

  it("B14 unknown conversations are 404; bad views and cursors are 400", async () => {
    expect((await get("/ai-gateway/conversations/conv_missing/messages")).statusCode).toBe(404);
    const view = await get(`/ai-gateway/conversations/${conversationId}/messages?view=raw`);
    expect(view.statusCode).toBe(400);
    expect(view.json().error).toMatchObject({ code: "invalid_request", where: "querystring.view" });
    expect(
      (await get(`/ai-gateway/conversations/${conversationId}/messages?cursor=zzz`)).statusCode,
    ).toBe(400);
  });
});
