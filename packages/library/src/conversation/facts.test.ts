import { describe, expect, it } from "vitest";
import { sha256Hex } from "../core/hash.js";
import type { Message } from "../history/message.js";
import type { ContextSection } from "./api.js";
import { createLiveConversation } from "./live-conversation.js";
import { scriptedBackend } from "../../../../test/support/scripted-backend.js";
import { counterIds, testPrices } from "../../../../test/support/conversation-fixtures.js";

function texts(message: Message | undefined): string[] {
  return (message?.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : []));
}

describe("turn facts (A9)", () => {
  it("A9 sections travel in the turn's own message, are resent only when changed, and sentFacts records what the model holds", async () => {
    let sections: ContextSection[] = [
      { name: "Design system", content: "Colours: red" },
      { name: "Document", content: "Page 1" },
    ];
    const backend = scriptedBackend([{ text: "1" }, { text: "2" }, { text: "3" }]);
    const conversation = createLiveConversation({
      backend,
      system: "You are a designer.",
      sections: async () => sections,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("first");
    await conversation.whenIdle();
    conversation.send("second");
    await conversation.whenIdle();
    sections = [
      { name: "Design system", content: "Colours: red" },
      { name: "Document", content: "Page 2" },
    ];
    conversation.send("third");
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(texts(saved.history[0])).toEqual([
      "# Design system\nColours: red",
      "# Document\nPage 1",
      "first",
    ]);
    expect(texts(saved.history[2])).toEqual(["second"]);
    expect(texts(saved.history[4])).toEqual(["# Document\nPage 2", "third"]);
    for (const request of backend.requests) expect(request.system).toBe("You are a designer.");
    const design = sha256Hex("Colours: red");
    expect(saved.sentFacts).toEqual([
      {
        message: 0,
        sections: new Map([
          ["Design system", design],
          ["Document", sha256Hex("Page 1")],
        ]),
      },
      {
        message: 2,
        sections: new Map([
          ["Design system", design],
          ["Document", sha256Hex("Page 1")],
        ]),
      },
      {
        message: 4,
        sections: new Map([
          ["Design system", design],
          ["Document", sha256Hex("Page 2")],
        ]),
      },
    ]);
    // The user's panel item shows only what the user typed.
    expect(
      saved.items
        .filter((item) => item.type === "user")
        .map((item) => item.type === "user" && item.text),
    ).toEqual(["first", "second", "third"]);
  });

  it("A9 a section the model no longer holds (new conversation) is sent again whole", async () => {
    const backend = scriptedBackend([{ text: "1" }, { text: "2" }]);
    const conversation = createLiveConversation({
      backend,
      sections: () => [{ name: "Document", content: "Page 1" }],
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("first");
    await conversation.whenIdle();
    conversation.requestNewConversation().confirm();
    conversation.send("again");
    await conversation.whenIdle();
    expect(texts(conversation.snapshot().history[0])).toEqual(["# Document\nPage 1", "again"]);
  });

  it("A9 the same section name supplied twice is refused and the message returns to the input box", async () => {
    const conversation = createLiveConversation({
      backend: scriptedBackend([]),
      sections: () => [
        { name: "Document", content: "a" },
        { name: "Document", content: "b" },
      ],
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("hi");
    await conversation.whenIdle();
    const saved = conversation.snapshot();
    expect(saved.history).toEqual([]);
    expect(saved.unsent.map((message) => message.text)).toEqual(["hi"]);
    expect(conversation.items.at(-1)).toMatchObject({
      type: "failure",
      message: 'context section "Document" is supplied twice',
    });
  });
});
