// Issue 16, "History handed to the library cannot go stale": the renderers and the encoders keep
// what they wrote for a history value by object identity; a value changed in place after a
// render or a save must not bring back the old bytes.
import { describe, expect, it } from "vitest";
import {
  PROVIDER_IDS,
  renderRequest,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import type { Block, Message } from "../../packages/library/src/history/index.js";
import {
  createHistoryEncodingCache,
  encodeConversation,
} from "../../packages/library/src/format/index.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { conversationWith, newPackage } from "../archive/helpers.js";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]);
const OTHER_PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x01]);
const SHA = "a".repeat(64);
const OTHER_SHA = "b".repeat(64);
const images = (sha: string) => (sha === SHA ? PNG : sha === OTHER_SHA ? OTHER_PNG : undefined);

/** A history with every block type, as mutable objects (the way a caller may hold them). */
function history(): Message[] {
  return [
    {
      role: "user",
      content: [
        { type: "text", text: "first question" },
        { type: "image", sha256: SHA, mimeType: "image/png" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "calling" },
        { type: "toolCall", id: "call_1", name: "read", arguments: '{"path":"a.txt"}' },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "toolResult", callID: "call_1", toolName: "read", isError: false, content: "A" },
      ],
    },
    { role: "user", content: [{ type: "text", text: "second question" }] },
  ];
}

function render(provider: ProviderId, messages: readonly Message[]): string {
  return renderRequest(provider, {
    history: messages,
    images,
    options: { model: "m", maxTokens: 100 },
  }).body;
}

/** Writable view of a block, for the mutations a caller might make. */
function writable(block: Block | undefined): Record<string, unknown> {
  if (block === undefined) throw new Error("the test history lacks a block");
  return block as unknown as Record<string, unknown>;
}

const mutations: Record<string, (messages: Message[]) => void> = {
  "a text block's text": (messages) => {
    writable(messages[0]?.content[0]).text = "first question, edited";
  },
  "an image block's sha256": (messages) => {
    writable(messages[0]?.content[1]).sha256 = OTHER_SHA;
  },
  "a tool call's arguments": (messages) => {
    writable(messages[1]?.content[1]).arguments = '{"path":"b.txt"}';
  },
  "a tool call's arguments replaced by their base64 form": (messages) => {
    const block = writable(messages[1]?.content[1]);
    delete block.arguments;
    block.argumentsBase64 = Buffer.from('{"path":"c.txt"}').toString("base64");
  },
  "a tool result's content and error flag": (messages) => {
    const block = writable(messages[2]?.content[0]);
    block.content = "B";
    block.isError = true;
  },
};

describe("history handed to the library cannot go stale (issue 16)", () => {
  for (const provider of PROVIDER_IDS) {
    for (const [name, mutate] of Object.entries(mutations)) {
      it(`${provider}: after ${name} changes in place, the next render shows the change`, () => {
        const messages = history();
        const before = render(provider, messages);
        expect(render(provider, messages)).toBe(before);
        mutate(messages);
        const fresh = render(provider, structuredClone(messages));
        expect(fresh).not.toBe(before);
        expect(render(provider, messages)).toBe(fresh);
      });
    }
  }
});

describe("saved history cannot go stale (issue 16)", () => {
  it("encodeConversation with a cache: a message it encoded is frozen, a new object is encoded anew", () => {
    const cache = createHistoryEncodingCache();
    const conversation = conversationWith([]);
    const before = encodeConversation(conversation, cache).toString("utf8");
    const block = writable(conversation.history[0]?.content[0]);
    expect(() => {
      block.text = "changed in place";
    }).toThrow(TypeError);
    expect(encodeConversation(conversation, cache).toString("utf8")).toBe(before);
    const history = [{ role: "user", content: [{ type: "text", text: "changed" }] } as Message];
    const changed = { ...conversation, history };
    expect(encodeConversation(changed, cache).toString("utf8")).toBe(
      encodeConversation(structuredClone(changed)).toString("utf8"),
    );
  });

  it("archive save: the elements it took are frozen, so the package always holds what they say", async () => {
    const folder = await newPackage();
    const { archive } = await openArchive(folder);
    const conversation = conversationWith([]);
    await archive.save(conversation, new Map());
    expect(() => {
      writable(conversation.history[0]?.content[0]).text = "changed in place";
    }).toThrow(TypeError);
    expect(() => {
      (conversation.items[0] as unknown as Record<string, unknown>).text = "changed in place";
    }).toThrow(TypeError);
    expect((await openArchive(folder)).conversation).toEqual(conversation);

    const history = [
      ...conversation.history,
      { role: "assistant", content: [{ type: "text", text: "a new message" }] } as Message,
    ];
    const grown = { ...conversation, history };
    expect((await archive.save(grown, new Map())).outcome).toBe("rewritten");
    expect((await openArchive(folder)).conversation).toEqual(grown);
  });
});
