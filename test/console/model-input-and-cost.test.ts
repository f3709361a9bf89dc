/**
 * Regression (issue 20): model-visible left out the instructions and tools the model
 * received, and no cost was shown anywhere. The messages route now gives `model_input` in
 * model-visible (the request settings of the context's newest response) and a `cost` on each
 * stored message with usage (reported, estimated from the price table, or unknown), on both
 * databases.
 */
import { expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";

const usage = { input: 100_000, output: 0, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 };

describeEachDialect("console model input and cost", (getDatabase) => {
  it("B14 model-visible gives the instructions, tools and output limit the model received (regression: left out)", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [question, answer] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather?" }] },
        {
          role: "assistant",
          content: [{ type: "text", text: "Sunny." }],
          request: {
            instructions: "Answer in one word.",
            tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
            maxOutputTokens: 64,
          },
        },
      ],
    });
    const server = await testServer(getDatabase());
    const read = async (query: string) => {
      const reply = await server.app.inject({
        method: "GET",
        url: `/ai-gateway/conversations/${question?.conversationId}/messages?${query}`,
        headers: server.operator,
      });
      expect(reply.statusCode).toBe(200);
      return reply.json() as { model_input?: unknown };
    };
    expect((await read("view=model-visible")).model_input).toEqual({
      message_id: answer?.id,
      instructions: "Answer in one word.",
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
      max_output_tokens: 64,
    });
    // Only the question in the context: no response, so nothing was recorded.
    expect((await read(`view=model-visible&anchor=${question?.id}`)).model_input).toBeNull();
    expect((await read("view=chatml")).model_input).toBeUndefined();
    await server.app.close();
  });

  it("B14 each stored message with usage has its cost: reported, estimated or unknown (regression: no cost anywhere)", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        {
          role: "assistant",
          content: [{ type: "text", text: "estimated" }],
          gateway: { model: "claude-sonnet-4-5", provider: "anthropic", usage },
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "reported" }],
          gateway: {
            model: "any",
            provider: "openrouter",
            usage: { ...usage, reportedCost: 0.25 },
          },
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "unknown" }],
          gateway: { model: "a-model-no-table-knows", provider: "anthropic", usage },
        },
      ],
    });
    const server = await testServer(getDatabase());
    const reply = await server.app.inject({
      method: "GET",
      url: `/ai-gateway/conversations/${first?.conversationId}/messages`,
      headers: server.operator,
    });
    await server.app.close();
    const messages = (reply.json() as { messages: { cost?: unknown }[] }).messages;
    expect(messages[0]?.cost).toBeUndefined();
    // claude-sonnet-4-5: $3 per million input tokens (below the long-context tier).
    expect(messages[1]?.cost).toMatchObject({ kind: "estimated" });
    expect((messages[1]?.cost as { dollars: number }).dollars).toBeCloseTo(0.3, 10);
    expect(messages[2]?.cost).toEqual({ kind: "reported", dollars: 0.25 });
    expect(messages[3]?.cost).toEqual({ kind: "unknown" });
  });
});
