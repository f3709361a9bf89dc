import { describe, expect, it } from "vitest";
import { createLiveConversation } from "./live-conversation.js";
import { addCost } from "./cost.js";
import { scriptedBackend, usage } from "../../../../test/support/scripted-backend.js";
import { counterIds, testPrices } from "../../../../test/support/conversation-fixtures.js";

describe("usage and cost (A7, A8)", () => {
  it("A8 every request's usage adds up and its cost is estimated from the price table", async () => {
    const backend = scriptedBackend([
      { text: "a", usage: { input: 1000, output: 100, cacheWrite: 2000 } },
      { text: "b", usage: { input: 10, output: 100, cacheRead: 3000 } },
    ]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("one");
    await conversation.whenIdle();
    conversation.send("two");
    await conversation.whenIdle();
    expect(conversation.usage).toEqual({
      input: 1010,
      output: 200,
      cacheRead: 3000,
      cacheWrite: 2000,
      webSearchRequests: 0,
    });
    expect(conversation.lastRoundUsage).toEqual(usage({ input: 10, output: 100, cacheRead: 3000 }));
    // (1000 + 500 + 2500) + (10 + 500 + 300) micro-dollars
    expect(conversation.estimatedCost).toEqual({ kind: "estimated", dollars: 0.00481 });
  });

  it("A8 costs the provider reported stay reported; mixed with estimates they become a partial estimate", async () => {
    const backend = scriptedBackend([
      { text: "a", usage: { reportedCost: 0.5 } },
      { text: "b", usage: { reportedCost: 0.25 } },
      { text: "c", usage: { input: 1_000_000, output: 0 } },
    ]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("one");
    await conversation.whenIdle();
    conversation.send("two");
    await conversation.whenIdle();
    expect(conversation.estimatedCost).toEqual({ kind: "reported", dollars: 0.75 });
    expect(conversation.usage.reportedCost).toBe(0.75);
    conversation.send("three");
    await conversation.whenIdle();
    expect(conversation.estimatedCost).toEqual({ kind: "estimated", dollars: 1.75, partial: true });
  });

  it("A8 a request on a model without prices makes the total unknown; notBilled adds nothing", () => {
    expect(addCost({ kind: "estimated", dollars: 1 }, { kind: "unknown" }, false)).toEqual({
      kind: "unknown",
    });
    expect(addCost({ kind: "estimated", dollars: 1 }, { kind: "notBilled" }, false)).toEqual({
      kind: "estimated",
      dollars: 1,
    });
    expect(addCost({ kind: "unknown" }, { kind: "notBilled" }, true)).toEqual({
      kind: "notBilled",
    });
    expect(addCost({ kind: "notBilled" }, { kind: "reported", dollars: 2 }, false)).toEqual({
      kind: "reported",
      dollars: 2,
    });
  });

  it("A8 images a generate_image tool made are added from the price table's image prices", async () => {
    const backend = scriptedBackend([
      {
        calls: [{ id: "c1", name: "generate_image", arguments: '{"prompt":"a cat"}' }],
        usage: { input: 0, output: 0 },
      },
      { text: "Here it is.", usage: { input: 0, output: 0 } },
    ]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      tools: [
        {
          name: "generate_image",
          description: "Makes an image.",
          inputSchema: { type: "object" },
          run: async () => ({
            content: "made 2 images",
            generatedImages: [
              {
                provider: "openai",
                model: "gpt-image-1",
                size: "1024x1024",
                quality: "medium",
                count: 2,
              },
              { provider: "unpriced", model: "x" },
            ],
          }),
        },
      ],
    });
    conversation.send("Draw a cat");
    await conversation.whenIdle();
    expect(conversation.estimatedCost).toEqual({ kind: "estimated", dollars: 0.08 });
  });
});

describe("context notice (A18)", () => {
  it("A18 a request reading 80% of the context window adds one notice offering compaction, once per crossing", async () => {
    const backend = scriptedBackend(
      [
        { text: "a", usage: { input: 100, cacheRead: 699 } },
        { text: "b", usage: { input: 100, cacheRead: 600, cacheWrite: 100 } },
        { text: "c", usage: { input: 900 } },
        { text: "d", usage: { input: 10 } },
        { text: "e", usage: { input: 850 } },
      ],
      "anthropic",
      "small-model",
    );
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
    });
    expect(conversation.contextWindow()).toBe(1000);
    const notices: number[] = [];
    for (let turn = 0; turn < 5; turn += 1) {
      conversation.send(`turn ${turn}`);
      await conversation.whenIdle();
      notices.push(conversation.items.filter((item) => item.type === "notice").length);
    }
    expect(notices).toEqual([0, 1, 1, 1, 2]);
    expect(conversation.items.find((item) => item.type === "notice")).toMatchObject({
      kind: "contextFull",
      action: "compact",
    });
  });

  it("A24 the context limit follows the current model", async () => {
    const conversation = createLiveConversation({
      backend: scriptedBackend([], "anthropic", "small-model"),
      newId: counterIds(),
      prices: testPrices,
    });
    expect(conversation.contextWindow()).toBe(1000);
    conversation.switchBackend(scriptedBackend([], "anthropic", "test-model"));
    expect(conversation.contextWindow()).toBe(100_000);
  });
});
