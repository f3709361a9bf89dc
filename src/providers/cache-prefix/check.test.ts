import { describe, expect, it } from "vitest";
import { isVerbatimError } from "../../core/errors.js";
import type { Message } from "../../history/message.js";
import { renderRequest } from "../render.js";
import { PROVIDER_IDS, type ProviderId, type RenderOptions } from "../types.js";
import { checkCachePrefix } from "./check.js";

const tools = [
  {
    name: "read",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  },
];
const options: RenderOptions = { model: "m", maxTokens: 100, system: "You help.", tools };

const first: Message[] = [
  { role: "user", content: [{ type: "text", text: "Read a.txt 日本語 🎉" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading." },
      { type: "toolCall", id: "c1", name: "read", arguments: '{"path": "a.txt"}' },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "toolResult", callID: "c1", toolName: "read", isError: false, content: "hello" },
    ],
  },
];
const second: Message[] = [
  ...first,
  { role: "assistant", content: [{ type: "text", text: "It says hello." }] },
  { role: "user", content: [{ type: "text", text: "Thanks" }] },
];

function body(
  provider: ProviderId,
  history: Message[],
  extra: Partial<RenderOptions> = {},
): string {
  return renderRequest(provider, {
    history,
    images: () => undefined,
    options: { ...options, ...extra },
  }).body;
}

function edit(history: Message[], index: number, message: Message): Message[] {
  const copy = [...history];
  copy[index] = message;
  return copy;
}

describe("cache-prefix checker", () => {
  for (const provider of PROVIDER_IDS) {
    it(`A27 ${provider}: the next request extends the previous one (the moved breakpoint ignored)`, () => {
      expect(checkCachePrefix(body(provider, first), body(provider, second))).toEqual({
        ok: true,
        provider,
        appended: 2,
      });
    });

    it(`A27 ${provider}: fails on whitespace inside a tool argument, a changed tool, a dropped block, a shortened string`, () => {
      const before = body(provider, first);
      const spaced = edit(second, 1, {
        role: "assistant",
        content: [
          { type: "text", text: "Reading." },
          { type: "toolCall", id: "c1", name: "read", arguments: '{"path":  "a.txt"}' },
        ],
      });
      const dropped = edit(second, 1, {
        role: "assistant",
        content: [{ type: "toolCall", id: "c1", name: "read", arguments: '{"path": "a.txt"}' }],
      });
      const shortened = edit(second, 0, {
        role: "user",
        content: [{ type: "text", text: "Read a.txt 日本語 " }],
      });
      for (const after of [spaced, dropped, shortened]) {
        const result = checkCachePrefix(before, body(provider, after));
        expect(result.ok).toBe(false);
      }
      const tool = checkCachePrefix(
        before,
        body(provider, second, { tools: [{ ...tools[0]!, description: "Read one file" }] }),
      );
      expect(tool).toMatchObject({
        ok: false,
        difference: { path: expect.stringContaining("tools") },
      });
      expect(tool.ok === false && tool.difference.messageIndex).toBe(undefined);
    });
  }

  it("A27 names the message index and the JSON path of the first difference", () => {
    const before = body("anthropic", first);
    const shortened = edit(second, 0, {
      role: "user",
      content: [{ type: "text", text: "Read a.txt 日本語 " }],
    });
    expect(checkCachePrefix(before, body("anthropic", shortened))).toEqual({
      ok: false,
      provider: "anthropic",
      difference: {
        messageIndex: 0,
        path: "$.messages[0].content[0].text",
        reason: '"Read a.txt 日本語 🎉" became "Read a.txt 日本語 "',
      },
    });
    const spaced = edit(second, 1, {
      role: "assistant",
      content: [
        { type: "text", text: "Reading." },
        { type: "toolCall", id: "c1", name: "read", arguments: '{"path":  "a.txt"}' },
      ],
    });
    expect(checkCachePrefix(before, body("anthropic", spaced))).toMatchObject({
      difference: {
        messageIndex: 1,
        path: "$.messages[1].content[1].input",
        reason: "the spacing differs",
      },
    });
    const dropped = edit(second, 1, {
      role: "assistant",
      content: [{ type: "toolCall", id: "c1", name: "read", arguments: '{"path": "a.txt"}' }],
    });
    expect(checkCachePrefix(before, body("anthropic", dropped))).toMatchObject({
      difference: { messageIndex: 1 },
    });
  });

  it("A27 fails on reordered keys", () => {
    const before =
      '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}';
    const after =
      '{"model":"m","messages":[{"content":[{"type":"text","text":"a"}],"role":"user"}]}';
    expect(checkCachePrefix(before, after)).toMatchObject({
      ok: false,
      difference: { messageIndex: 0, path: "$.messages[0]" },
    });
    const top = '{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"model":"m"}';
    expect(checkCachePrefix(before, top)).toMatchObject({ ok: false, difference: { path: "$" } });
  });

  it("A27 ignores only cache_control, at any place", () => {
    const before =
      '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]}';
    const after =
      '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}';
    expect(checkCachePrefix(before, after)).toEqual({
      ok: true,
      provider: "anthropic",
      appended: 1,
    });
    expect(checkCachePrefix(before, before.replace('"a"', '"\\u0061"')).ok).toBe(false);
  });

  it("A23 with ignoreSignedMaterial, the first request of a turn extends the previous one minus its thinking", () => {
    const material = {
      provider: "anthropic" as const,
      leading: [{ type: "thinking", thinking: "t", signature: "s" }],
      blockSignatures: [],
      trailing: [],
      reasoningDetails: [],
    };
    const inTurn = renderRequest("anthropic", {
      history: first,
      images: () => undefined,
      options,
      signed: [{ messageIndex: 1, material }],
    }).body;
    const nextTurn = body("anthropic", second);
    expect(checkCachePrefix(inTurn, nextTurn).ok).toBe(false);
    expect(checkCachePrefix(inTurn, nextTurn, { ignoreSignedMaterial: true })).toEqual({
      ok: true,
      provider: "anthropic",
      appended: 2,
    });
  });

  it("refuses a body that is not JSON or has no message list", () => {
    for (const [a, b] of [
      ["{", "{}"],
      ['{"model":"m"}', '{"model":"m"}'],
    ] as const) {
      try {
        checkCachePrefix(a, b);
        expect.unreachable();
      } catch (error) {
        expect(isVerbatimError(error) && error.code).toBe("cache_prefix_unreadable");
      }
    }
  });
});
