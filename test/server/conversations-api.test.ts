/**
 * The Conversations API (issue 17) with the official `openai` client against the real server on
 * both databases: create, read, update metadata and delete conversations; list (paged as
 * OpenAI's), create, read and delete items. Items are the messages of the conversation's
 * current chain, so a response continued from the conversation's last response adds its items.
 * Deleting is a tombstone: the subject gets 404 as for a missing id, the rows stay.
 */
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("Conversations API with the openai client", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let client: OpenAI;
  let other: OpenAI;
  let baseURL: string;

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
    baseURL = `http://127.0.0.1:${port}/v1`;
    const { key } = await server.apiKeyFor(uniqueName("subject"));
    client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
    const { key: otherKey } = await server.apiKeyFor(uniqueName("other"));
    other = new OpenAI({ apiKey: otherKey, baseURL, maxRetries: 0 });
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  async function statusOf(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
    try {
      await call;
      return { status: 200, body: undefined };
    } catch (error) {
      if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, body: error.error };
      throw error;
    }
  }

  it("creates, reads, updates and deletes a conversation", async () => {
    const created = await client.conversations.create({ metadata: { topic: "demo" } });
    expect(created).toMatchObject({ object: "conversation", metadata: { topic: "demo" } });
    expect(created.id).toMatch(/^conv_/);
    expect(typeof created.created_at).toBe("number");

    const read = await client.conversations.retrieve(created.id);
    expect(read).toEqual(created);

    const updated = await client.conversations.update(created.id, { metadata: { topic: "new" } });
    expect(updated.metadata).toEqual({ topic: "new" });
    expect((await client.conversations.retrieve(created.id)).metadata).toEqual({ topic: "new" });

    const deleted = await client.conversations.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: "conversation.deleted", deleted: true });
    const missing = await statusOf(client.conversations.retrieve(created.id));
    const never = await statusOf(client.conversations.retrieve("conv_doesnotexist"));
    expect(missing.status).toBe(404);
    expect(never.status).toBe(404);
    // A deleted conversation answers exactly as one that never existed (but its own id).
    const shape = (body: unknown, id: string) => {
      // The client gives the body's `error` object.
      const { code, message, where, hint } = body as Record<string, unknown>;
      return JSON.stringify({ code, message, where, hint }).replaceAll(id, "ID");
    };
    expect(shape(missing.body, created.id)).toBe(shape(never.body, "conv_doesnotexist"));
    expect((await statusOf(client.conversations.delete(created.id))).status).toBe(404);
    expect((await statusOf(client.conversations.items.list(created.id))).status).toBe(404);

    // The operator keeps the conversation's row.
    const rows = await sql<{ id: string }>`select id from ai_gateway_conversations
      where id = ${created.id}`.execute(getDatabase().db);
    expect(rows.rows).toHaveLength(1);
  });

  it("creates items, lists them newest first and pages with after, reads and deletes one", async () => {
    const conversation = await client.conversations.create({
      items: [{ type: "message", role: "user", content: "first" }],
    });
    const added = await client.conversations.items.create(conversation.id, {
      items: [
        { type: "message", role: "assistant", content: "second" },
        { type: "message", role: "user", content: "third" },
      ],
    });
    expect(added.object).toBe("list");
    expect(added.data.map((item) => item.type === "message" && item.role)).toEqual([
      "assistant",
      "user",
    ]);

    const all = await client.conversations.items.list(conversation.id, { order: "asc" });
    const texts = all.data.map((item) =>
      item.type === "message"
        ? item.content.map((part) => ("text" in part ? part.text : "")).join("")
        : "",
    );
    expect(texts).toEqual(["first", "second", "third"]);

    // Paged as OpenAI's: newest first by default, `after` the last id of a page.
    const firstPage = await client.conversations.items.list(conversation.id, { limit: 2 });
    expect(firstPage.data.map((item) => item.id)).toEqual([all.data[2]?.id, all.data[1]?.id]);
    expect(firstPage.has_more).toBe(true);
    const ids: string[] = [];
    for await (const item of client.conversations.items.list(conversation.id, { limit: 1 })) {
      ids.push(item.id ?? "");
    }
    expect(ids).toEqual(all.data.map((item) => item.id).reverse());

    const secondId = all.data[1]?.id ?? "";
    const one = await client.conversations.items.retrieve(secondId, {
      conversation_id: conversation.id,
    });
    expect(one).toEqual(all.data[1]);

    const afterDelete = await client.conversations.items.delete(secondId, {
      conversation_id: conversation.id,
    });
    expect(afterDelete.id).toBe(conversation.id);
    const left = await client.conversations.items.list(conversation.id, { order: "asc" });
    expect(left.data.map((item) => item.id)).toEqual([all.data[0]?.id, all.data[2]?.id]);
    expect(
      (
        await statusOf(
          client.conversations.items.retrieve(secondId, { conversation_id: conversation.id }),
        )
      ).status,
    ).toBe(404);
    // Nor is it an input item of a response that took it.
    const conversationCopy = await client.conversations.items.list(conversation.id);
    expect(conversationCopy.data.map((item) => item.id)).not.toContain(secondId);
    const response = await client.responses.create({
      model: "claude-test",
      input: "fourth",
      conversation: conversation.id,
    });
    const inputs = await client.responses.inputItems.list(response.id, { order: "asc" });
    expect(inputs.data.map((item) => item.id)).not.toContain(secondId);
    // The bytes stay for the operator.
    const rows = await sql<{ id: string }>`select id from ai_gateway_messages
      where id = ${secondId}`.execute(getDatabase().db);
    expect(rows.rows).toHaveLength(1);
  });

  it("a conversation's items follow its chain: a response continuing it adds its input and output", async () => {
    const first = await client.responses.create({ model: "claude-test", input: "Hello" });
    const conversationId = (first as unknown as { conversation_id: string }).conversation_id;
    const second = await client.responses.create({
      model: "claude-test",
      input: "Again",
      previous_response_id: first.id,
    });
    const items = await client.conversations.items.list(conversationId, { order: "asc" });
    expect(items.data.map((item) => item.type === "message" && item.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(items.data[3]?.id).toBe(second.id);

    // Items appended through the Conversations API continue the same chain.
    await client.conversations.items.create(conversationId, {
      items: [{ type: "message", role: "user", content: "Appended" }],
    });
    const after = await client.conversations.items.list(conversationId, { limit: 1 });
    expect(after.data[0]).toMatchObject({ type: "message", role: "user" });
  });

  it("function calls and their outputs are items; an output of no known call is refused and nothing is written", async () => {
    const conversation = await client.conversations.create({
      items: [
        { type: "message", role: "user", content: "weather?" },
        { type: "function_call", call_id: "call_a", name: "weather", arguments: '{"city":"Oslo"}' },
      ],
    });
    await client.conversations.items.create(conversation.id, {
      items: [{ type: "function_call_output", call_id: "call_a", output: "rain" }],
    });
    const items = await client.conversations.items.list(conversation.id, { order: "asc" });
    expect(items.data.map((item) => item.type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
    ]);
    expect(items.data[1]).toMatchObject({ call_id: "call_a", name: "weather" });
    expect(items.data[2]).toMatchObject({ call_id: "call_a", output: "rain" });

    const refused = await statusOf(
      client.conversations.items.create(conversation.id, {
        items: [
          { type: "message", role: "user", content: "kept?" },
          { type: "function_call_output", call_id: "call_unknown", output: "x" },
        ],
      }),
    );
    expect(refused.status).toBe(400);
    expect((refused.body as { where?: string }).where).toBe("body.items[1].call_id");
    const after = await client.conversations.items.list(conversation.id);
    expect(after.data).toHaveLength(3);
  });

  it("a response stored with store: false is not an item (the operator keeps it)", async () => {
    const unstored = await client.responses.create({
      model: "claude-test",
      input: "Off the record",
      store: false,
    });
    const conversationId = (unstored as unknown as { conversation_id: string }).conversation_id;
    const items = await client.conversations.items.list(conversationId, { order: "asc" });
    expect(items.data.map((item) => item.type === "message" && item.role)).toEqual(["user"]);
    expect(items.data.map((item) => item.id)).not.toContain(unstored.id);
    expect(
      (
        await statusOf(
          client.conversations.items.retrieve(unstored.id, { conversation_id: conversationId }),
        )
      ).status,
    ).toBe(404);
    const rows = await sql<{ id: string }>`select id from ai_gateway_messages
      where id = ${unstored.id}`.execute(getDatabase().db);
    expect(rows.rows).toHaveLength(1);
  });

  it("a developer item keeps its role, and a response given the conversation sends it as the system prompt", async () => {
    const conversation = await client.conversations.create({
      items: [
        { type: "message", role: "developer", content: "Answer in French." },
        { type: "message", role: "user", content: "Hello" },
      ],
    });
    const items = await client.conversations.items.list(conversation.id, { order: "asc" });
    expect(items.data.map((item) => item.type === "message" && item.role)).toEqual([
      "developer",
      "user",
    ]);
    const response = await client.responses.create({
      model: "claude-test",
      input: "And?",
      conversation: conversation.id,
    });
    expect(response.status).toBe("completed");
    const sent = upstream.requests[upstream.requests.length - 1] as {
      system?: unknown;
      messages: unknown[];
    };
    expect(JSON.stringify(sent.system)).toContain("Answer in French.");
    expect(JSON.stringify(sent.messages)).not.toContain("Answer in French.");
    const after = await client.conversations.items.list(conversation.id, { limit: 1 });
    expect(after.data[0]?.id).toBe(response.id);
  });

  it("an item_reference copies a stored item of the subject's own; another subject's answers 404", async () => {
    const source = await client.responses.create({ model: "claude-test", input: "Source text" });
    const conversation = await client.conversations.create({});
    await client.conversations.items.create(conversation.id, {
      items: [{ type: "item_reference", id: source.id }],
    });
    const items = await client.conversations.items.list(conversation.id);
    expect(items.data).toHaveLength(1);
    expect(JSON.stringify(items.data[0])).toContain("You said: Source text");
    const foreign = await statusOf(
      other.conversations.create({ items: [{ type: "item_reference", id: source.id }] }),
    );
    expect(foreign.status).toBe(404);
    expect((foreign.body as { where?: string }).where).toMatch(/^body\.items\[0\]/);
  });

  it("another subject's conversation and items answer exactly like missing ones", async () => {
    const mine = await client.conversations.create({
      items: [{ type: "message", role: "user", content: "private" }],
    });
    const items = await client.conversations.items.list(mine.id);
    const itemId = items.data[0]?.id ?? "";
    for (const call of [
      () => other.conversations.retrieve(mine.id),
      () => other.conversations.update(mine.id, { metadata: { x: "y" } }),
      () => other.conversations.delete(mine.id),
      () => other.conversations.items.list(mine.id),
      () => other.conversations.items.retrieve(itemId, { conversation_id: mine.id }),
      () => other.conversations.items.delete(itemId, { conversation_id: mine.id }),
      () =>
        other.conversations.items.create(mine.id, {
          items: [{ type: "message", role: "user", content: "intrusion" }],
        }),
    ]) {
      const answer = await statusOf(call());
      expect(answer.status).toBe(404);
      expect(JSON.stringify(answer.body)).not.toContain("private");
    }
    // Nothing changed for the owner.
    expect((await client.conversations.items.list(mine.id)).data).toHaveLength(1);
    expect((await client.conversations.retrieve(mine.id)).metadata).toEqual({});
  });

  it("refuses more than 20 items and bad metadata before writing anything", async () => {
    const tooMany = Array.from({ length: 21 }, () => ({
      type: "message" as const,
      role: "user" as const,
      content: "x",
    }));
    const before = await sql<{ count: number | string }>`select count(*) as count
      from ai_gateway_conversations`.execute(getDatabase().db);
    const answer = await statusOf(client.conversations.create({ items: tooMany }));
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain("items");
    const bad = await statusOf(
      client.conversations.create({ metadata: { ["k".repeat(65)]: "v" } }),
    );
    expect(bad.status).toBe(400);
    const after = await sql<{ count: number | string }>`select count(*) as count
      from ai_gateway_conversations`.execute(getDatabase().db);
    expect(Number(after.rows[0]?.count)).toBe(Number(before.rows[0]?.count));
  });
});
