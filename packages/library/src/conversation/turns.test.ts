import { describe, expect, it } from "vitest";
import { createLiveConversation } from "./live-conversation.js";
import { gate, scriptedBackend } from "../../../../test/support/scripted-backend.js";
import {
  changeRecorder,
  counterIds,
  echoTool,
  testPrices,
} from "../../../../test/support/conversation-fixtures.js";
import { openToolCalls } from "./tool-calls.js";

describe("turns", () => {
  it("A6 a turn streams into panel items and history, records the turn start and the provider at its end", async () => {
    const backend = scriptedBackend([{ text: "Hello there." }]);
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    const sent = conversation.send("Hi");
    expect(sent).toEqual({ status: "started", itemId: "ID-1" });
    expect(conversation.running).toBe(true);
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.items).toEqual([
      { id: "ID-1", type: "user", text: "Hi" },
      { id: "ID-2", type: "assistant", text: "Hello there." },
    ]);
    expect(saved.history).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "text", text: "Hello there." }] },
    ]);
    expect(saved.sentFacts).toEqual([{ message: 0 }]);
    expect(saved.provider).toBe("anthropic");
    expect(saved.model).toBe("test-model");
    expect(saved.lastRoundUsage).toEqual(saved.usage);
    expect(recorder.changes).toEqual(["turnEnd"]);
  });

  it("A6 tool calls run through host tools and their results go back to the model until it stops", async () => {
    const backend = scriptedBackend([
      { text: "Echoing.", calls: [{ id: "toolu_1", name: "echo", arguments: '{"text":"a"}' }] },
      { text: "Done." },
    ]);
    const conversation = createLiveConversation({
      backend,
      tools: [echoTool],
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("Echo a");
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(saved.history[2]?.content).toEqual([
      {
        type: "toolResult",
        callID: "toolu_1",
        toolName: "echo",
        isError: false,
        content: '{"text":"a"}',
      },
    ]);
    expect(backend.requests[1]?.history).toEqual(saved.history.slice(0, 3));
    expect(backend.requests[0]?.tools).toEqual(["echo"]);
    const tool = saved.items.find((item) => item.type === "tool");
    expect(tool).toMatchObject({
      name: "echo",
      status: "succeeded",
      statusText: "echoed",
      callID: "toolu_1",
    });
    expect(saved.usage.input).toBe(20);
    expect(saved.lastRoundUsage?.input).toBe(10);
    expect(saved.sentFacts).toEqual([{ message: 0 }]);
  });

  it("A3 images a tool returns reach the model in a user message inside the same turn", async () => {
    const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
    const backend = scriptedBackend([
      { calls: [{ id: "c1", name: "shot", arguments: "{}" }] },
      { text: "I see it." },
    ]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      tools: [
        {
          name: "shot",
          description: "Screenshot",
          inputSchema: { type: "object" },
          run: async () => ({ content: "captured", images: [{ bytes, mimeType: "image/png" }] }),
        },
      ],
    });
    conversation.send("Look");
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "user",
      "assistant",
    ]);
    const image = saved.history[3]?.content[1];
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(conversation.images().size).toBe(1);
    expect(saved.sentFacts).toEqual([{ message: 0 }]);
  });

  it("A6 a message sent while a turn runs is queued, fires the hook, and runs as the next turn", async () => {
    const hold = gate();
    const backend = scriptedBackend([{ text: "First.", wait: hold.promise }, { text: "Second." }]);
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    conversation.send("one");
    const queued = conversation.send("two");
    expect(queued.status).toBe("queued");
    expect(conversation.snapshot().queued).toEqual([{ id: "ID-2", text: "two" }]);
    expect(recorder.changes).toEqual(["queued"]);
    hold.open();
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.queued).toEqual([]);
    expect(saved.sentFacts).toEqual([{ message: 0 }, { message: 2 }]);
    expect(saved.items.filter((item) => item.type === "user").map((item) => item.id)).toEqual([
      "ID-1",
      "ID-2",
    ]);
    expect(recorder.changes).toEqual(["queued", "turnEnd", "turnEnd"]);
  });

  it("A6 a queued message can be returned to the input box and taken back by the host", async () => {
    const hold = gate();
    const backend = scriptedBackend([{ text: "First.", wait: hold.promise }]);
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    conversation.send("one");
    const queued = conversation.send("two");
    if (queued.status !== "queued") throw new Error("expected a queued message");
    conversation.returnToInput(queued.message.id);
    expect(conversation.snapshot().unsent).toEqual([{ id: queued.message.id, text: "two" }]);
    expect(recorder.changes).toEqual(["queued", "returned"]);
    hold.open();
    await conversation.whenIdle();
    expect(conversation.snapshot().history).toHaveLength(2);
    expect(conversation.takeUnsent()).toEqual([{ id: queued.message.id, text: "two" }]);
    expect(conversation.snapshot().unsent).toEqual([]);
    expect(() => conversation.returnToInput("nope")).toThrow(/no queued message/);
    expect(() => conversation.send("  ")).toThrow(/the message is empty/);
  });

  it("A6 cancelling mid-stream keeps the text already shown and returns queued messages to the input box", async () => {
    const hold = gate();
    const backend = scriptedBackend([{ text: "Partial answer", wait: hold.promise }]);
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    conversation.send("one");
    conversation.send("two");
    await new Promise((resolve) => setTimeout(resolve, 5));
    conversation.cancel();
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.history).toEqual([
      { role: "user", content: [{ type: "text", text: "one" }] },
      { role: "assistant", content: [{ type: "text", text: "Partial answer" }] },
    ]);
    expect(saved.queued).toEqual([]);
    expect(saved.unsent.map((message) => message.text)).toEqual(["two"]);
    expect(recorder.changes).toEqual(["queued", "turnEnd", "returned"]);
    expect(conversation.running).toBe(false);
  });

  it("A6 cancelling while a tool runs gives every tool call its result: history stays consistent", async () => {
    const backend = scriptedBackend([
      {
        calls: [
          { id: "c1", name: "slow", arguments: "{}" },
          { id: "c2", name: "slow", arguments: "{}" },
        ],
      },
    ]);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      tools: [
        {
          name: "slow",
          description: "Waits until cancelled.",
          inputSchema: { type: "object" },
          run: (_call, context) =>
            new Promise((_, reject) => {
              started();
              context.signal.addEventListener("abort", () => reject(new Error("aborted")));
            }),
        },
      ],
    });
    conversation.send("go");
    await running;
    conversation.cancel();
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(openToolCalls(saved.history)).toBeUndefined();
    expect(
      saved.history[2]?.content.map((block) => block.type === "toolResult" && block.isError),
    ).toEqual([true, true]);
    expect(
      saved.items
        .filter((item) => item.type === "tool")
        .map((item) => item.type === "tool" && item.status),
    ).toEqual(["cancelled", "cancelled"]);
  });

  it("A6 a failed request adds a failure item and leaves the conversation usable", async () => {
    const backend = scriptedBackend([{ fail: "HTTP 529 overloaded" }, { text: "Back." }]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("one");
    await conversation.whenIdle();
    expect(conversation.items.at(-1)).toMatchObject({
      type: "failure",
      message: "HTTP 529 overloaded",
    });
    conversation.send("two");
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.history.map((message) => message.role)).toEqual(["user", "user", "assistant"]);
    expect(saved.sentFacts).toEqual([{ message: 0 }, { message: 1 }]);
  });

  it("A6 ratings and card states are kept by item id and fire the change hook", async () => {
    const backend = scriptedBackend([
      async (request) => {
        request.onEvent({ type: "text", text: "Here." });
        return {
          message: { role: "assistant", content: [{ type: "text", text: "Here." }] },
          usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
          stopReason: "end",
        };
      },
    ]);
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    conversation.send("Hi");
    await conversation.whenIdle();
    const last = conversation.items.at(-1);
    if (last === undefined) throw new Error("no item");
    conversation.rate(last.id, { rating: "good", reasons: ["fast"] });
    expect(conversation.snapshot().feedback.get(last.id)).toEqual({
      rating: "good",
      reasons: ["fast"],
    });
    conversation.rate(last.id, undefined);
    expect(conversation.snapshot().feedback.size).toBe(0);
    conversation.resolveCard(last.id);
    expect(conversation.snapshot().resolvedCards).toEqual([last.id]);
    expect(() => conversation.setSkillCard(last.id, "saved")).toThrow(/not a skillProposal/);
    expect(() => conversation.rate("missing", { rating: "bad", reasons: [] })).toThrow(
      expect.objectContaining({ code: "conversation_item_not_found" }),
    );
    expect(recorder.changes).toEqual(["turnEnd", "rating", "rating", "cardState"]);
  });
});
