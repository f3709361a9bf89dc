/**
 * The Vercel AI SDK 6 (`ai` with `@ai-sdk/openai`'s Responses model), unchanged, pointed at the
 * server (issue 17): generateText and streamText with `system:`, multi-step tools, generateObject,
 * and two turns with store: true (the second sends item_reference items). The server runs on
 * loopback; behind it is a stub model, a local server speaking the Anthropic wire format (not
 * Anthropic), scripted per test.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { describeEachDialect } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

describeEachDialect("the AI SDK against the server", (getDatabase) => {
  let stubbed: StubbedServer;
  let model: ReturnType<ReturnType<typeof createOpenAI>["responses"]>;

  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
    const openai = createOpenAI({ apiKey: stubbed.key, baseURL: stubbed.baseUrl });
    model = openai.responses("claude-ai-sdk");
  });
  afterAll(async () => {
    await stubbed.close();
  });

  const anthropic = () => stubbed.stubs.anthropic;

  it("generateText with system: the system prompt reaches the model's system slot", async () => {
    anthropic().script.push({ text: "Hi there." });
    const result = await generateText({
      model,
      system: "You are terse.",
      prompt: "Hello",
      maxRetries: 0,
    });
    expect(result.text).toBe("Hi there.");
    const sent = stubbed.lastSent("anthropic");
    expect(sent.system).toBe("You are terse.");
    expect(sent.messages).toHaveLength(1);
  });

  it("streamText with system: streams the text", async () => {
    anthropic().script.push({ text: "Streamed words." });
    const result = streamText({ model, system: "Be brief.", prompt: "Stream", maxRetries: 0 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe("Streamed words.");
    expect(stubbed.lastSent("anthropic").system).toBe("Be brief.");
  });

  it("multi-step tools: the tool runs and its result goes back in the next step", async () => {
    anthropic().script.push(
      { toolCalls: [{ id: "toolu_weather", name: "weather", arguments: '{"city":"Oslo"}' }] },
      { text: "It is 3 degrees in Oslo." },
    );
    const result = await generateText({
      model,
      prompt: "Weather in Oslo?",
      tools: {
        weather: tool({
          description: "The weather in a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => `${city}: 3 degrees`,
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(result.text).toBe("It is 3 degrees in Oslo.");
    expect(result.steps).toHaveLength(2);
    const sent = JSON.stringify(stubbed.lastSent("anthropic").messages);
    expect(sent).toContain("Oslo: 3 degrees");
    expect(sent).toContain('"name":"weather"');
  });

  it("generateObject: the JSON schema reaches the model as structured output and the object comes back", async () => {
    anthropic().script.push({ text: '{"name":"Ada","age":36}' });
    const result = await generateObject({
      model,
      schema: z.object({ name: z.string(), age: z.number() }),
      prompt: "A person",
      maxRetries: 0,
    });
    expect(result.object).toEqual({ name: "Ada", age: 36 });
    const sent = stubbed.lastSent("anthropic");
    expect(sent.output_config.format.type).toBe("json_schema");
    expect(sent.output_config.format.schema.properties.age).toBeDefined();
  });

  it("two turns with store: true: the second turn's item references resolve to the first turn", async () => {
    anthropic().script.push({ text: "Noted: 7." }, { text: "You said 7." });
    const first = await generateText({
      model,
      prompt: "Remember 7.",
      providerOptions: { openai: { store: true } },
      maxRetries: 0,
    });
    const second = await generateText({
      model,
      messages: [
        { role: "user", content: "Remember 7." },
        ...first.response.messages,
        { role: "user", content: "What did I say?" },
      ],
      providerOptions: { openai: { store: true } },
      maxRetries: 0,
    });
    expect(second.text).toBe("You said 7.");
    const body = second.request.body;
    const request = (typeof body === "string" ? JSON.parse(body) : body) as { input: unknown };
    expect(JSON.stringify(request.input)).toContain("item_reference");
    const sent = stubbed.lastSent("anthropic").messages;
    expect(sent).toHaveLength(3);
    expect(JSON.stringify(sent[1])).toContain("Noted: 7.");
  });
});
