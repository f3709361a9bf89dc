/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20), unchanged, pointed at the server (issue 17):
 * a Runner continuing with previousResponseId, an agent with an outputType (structured output),
 * a function tool whose output is content parts, a tool returning an image, and an
 * OpenAIConversationsSession shared by two runs (with text, and with an image). The server runs
 * on loopback; behind it is a stub model, a local server speaking the Anthropic wire format
 * (not Anthropic), scripted per test.
 */
import {
  Agent,
  OpenAIConversationsSession,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { describeEachDialect } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

describeEachDialect("the Agents SDK against the server", (getDatabase) => {
  let stubbed: StubbedServer;
  let runner: Runner;

  beforeAll(async () => {
    setTracingDisabled(true);
    stubbed = await startStubbedServer(getDatabase());
    runner = new Runner({
      modelProvider: new OpenAIProvider({
        apiKey: stubbed.key,
        baseURL: stubbed.baseUrl,
        useResponses: true,
      }),
      tracingDisabled: true,
    });
  });
  afterAll(async () => {
    await stubbed.close();
  });

  const anthropic = () => stubbed.stubs.anthropic;

  it("a Runner continues with previousResponseId: the model sees the first turn", async () => {
    const agent = new Agent({ name: "Helper", instructions: "Be brief.", model: "claude-agents" });
    anthropic().script.push({ text: "Noted." }, { text: "You said 7." });
    const first = await runner.run(agent, "Remember 7.");
    expect(first.finalOutput).toBe("Noted.");
    expect(first.lastResponseId).toBeDefined();
    const second = await runner.run(agent, "What did I say?", {
      previousResponseId: first.lastResponseId!,
    });
    expect(second.finalOutput).toBe("You said 7.");
    const sent = stubbed.lastSent("anthropic");
    expect(sent.system).toBe("Be brief.");
    expect(JSON.stringify(sent.messages)).toContain("Remember 7.");
    expect(sent.messages).toHaveLength(3);
  });

  it("an outputType: the JSON schema reaches the model and the output is parsed", async () => {
    const agent = new Agent({
      name: "Extractor",
      instructions: "Extract the person.",
      model: "claude-agents",
      outputType: z.object({ name: z.string(), age: z.number() }),
    });
    anthropic().script.push({ text: '{"name":"Ada","age":36}' });
    const result = await runner.run(agent, "Ada is 36.");
    expect(result.finalOutput).toEqual({ name: "Ada", age: 36 });
    expect(stubbed.lastSent("anthropic").output_config.format.type).toBe("json_schema");
  });

  it("a tool: its output goes back to the model and the run ends with the model's text", async () => {
    const agent = new Agent({
      name: "Weather",
      model: "claude-agents",
      tools: [
        tool({
          name: "weather",
          description: "The weather in a city",
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => `${city}: 3 degrees`,
        }),
      ],
    });
    anthropic().script.push(
      { toolCalls: [{ id: "toolu_agents", name: "weather", arguments: '{"city":"Oslo"}' }] },
      { text: "3 degrees." },
    );
    const result = await runner.run(agent, "Weather in Oslo?");
    expect(result.finalOutput).toBe("3 degrees.");
    expect(JSON.stringify(stubbed.lastSent("anthropic").messages)).toContain("Oslo: 3 degrees");
  });

  it("a tool returning an image: the image reaches the model after the tool's result", async () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const agent = new Agent({
      name: "Camera",
      model: "claude-agents",
      tools: [
        tool({
          name: "snapshot",
          description: "Takes a picture",
          parameters: z.object({}),
          execute: async () => ({ type: "image", image: `data:image/png;base64,${png}` }),
        }),
      ],
    });
    anthropic().script.push(
      { toolCalls: [{ id: "toolu_image", name: "snapshot", arguments: "{}" }] },
      { text: "A single pixel." },
    );
    const result = await runner.run(agent, "Take a picture");
    expect(result.finalOutput).toBe("A single pixel.");
    const last = stubbed.lastSent("anthropic").messages.at(-1);
    expect(last.content[0]).toMatchObject({ type: "tool_result" });
    expect(last.content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: png },
    });
  });

  it("an OpenAIConversationsSession: two runs share the conversation, its items are listed", async () => {
    const session = new OpenAIConversationsSession({
      apiKey: stubbed.key,
      baseURL: stubbed.baseUrl,
    });
    const agent = new Agent({ name: "Helper", instructions: "Be brief.", model: "claude-agents" });
    anthropic().script.push({ text: "Noted." }, { text: "You said 7." });
    const first = await runner.run(agent, "Remember 7.", { session });
    expect(first.finalOutput).toBe("Noted.");
    const conversationId = await session.getSessionId();
    expect(conversationId).toMatch(/^conv_/);
    const second = await runner.run(agent, "What did I say?", { session });
    expect(second.finalOutput).toBe("You said 7.");
    const sent = stubbed.lastSent("anthropic");
    expect(sent.messages.map((message: { role: string }) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
    ]);
    expect(JSON.stringify(sent.messages)).toContain("Remember 7.");
    const items = await session.getItems();
    expect(items.map((item) => ("role" in item ? item.role : item.type))).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    const texts = JSON.stringify(items);
    for (const text of ["Remember 7.", "Noted.", "What did I say?", "You said 7."]) {
      expect(texts).toContain(text);
    }
    const listed = await stubbed.get(`/conversations/${conversationId}/items?order=asc`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(4);
  });

  it("an OpenAIConversationsSession with an image: the session keeps it and the next run shows it again", async () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const session = new OpenAIConversationsSession({
      apiKey: stubbed.key,
      baseURL: stubbed.baseUrl,
    });
    const agent = new Agent({ name: "Viewer", model: "claude-agents" });
    anthropic().script.push({ text: "A pixel." }, { text: "Still a pixel." });
    await runner.run(
      agent,
      [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image: `data:image/png;base64,${png}` },
          ],
        },
      ],
      { session },
    );
    const second = await runner.run(agent, "And now?", { session });
    expect(second.finalOutput).toBe("Still a pixel.");
    const first = stubbed.lastSent("anthropic").messages[0];
    expect(first.content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: png },
    });
  });
});
