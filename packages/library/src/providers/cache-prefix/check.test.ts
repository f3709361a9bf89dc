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

/**
 * The label a body of `provider` gets: an OpenRouter body without any field only OpenRouter
 * takes is a Chat Completions body (the two differ in `max_tokens` alone).
 */
const labelOf = (provider: ProviderId): ProviderId =>
  provider === "openrouter" ? "openai-chat" : provider;

describe("cache-prefix checker", () => {
  for (const provider of PROVIDER_IDS) {
    it(`A27 ${provider}: the next request extends the previous one (the moved breakpoint ignored)`, () => {
      expect(checkCachePrefix(body(provider, first), body(provider, second))).toEqual({
        ok: true,
        provider: labelOf(provider),
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

  it("checkCachePrefix labels plain Chat bodies openai-chat, not anthropic or openrouter (issue 19)", () => {
    const label = (value: unknown) => {
      const text = JSON.stringify(value);
      return checkCachePrefix(text, text).provider;
    };
    // Chat Completions bodies as the OpenAI documentation writes them.
    expect(label({ model: "gpt-4o", messages: [{ role: "user", content: "Hello!" }] })).toBe(
      "openai-chat",
    );
    expect(
      label({
        model: "gpt-4o",
        max_tokens: 100,
        messages: [
          { role: "system", content: "You are a helpful assistant." },
          { role: "user", content: "Hello!" },
        ],
      }),
    ).toBe("openai-chat");
    expect(
      label({
        model: "gpt-4o",
        max_tokens: 100,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is in this image?" },
              { type: "image_url", image_url: { url: "https://example.com/a.png" } },
            ],
          },
        ],
        tools: [{ type: "function", function: { name: "f", parameters: {} } }],
      }),
    ).toBe("openai-chat");
    // What only OpenRouter or Anthropic take still decides.
    expect(
      label({
        model: "m",
        messages: [{ role: "user", content: "Hi" }],
        provider: { sort: "price" },
      }),
    ).toBe("openrouter");
    expect(body("openrouter", first, { extras: { provider: { sort: "price" } } })).toContain(
      '"provider"',
    );
    expect(
      checkCachePrefix(
        body("openrouter", first, { extras: { provider: { sort: "price" } } }),
        body("openrouter", second, { extras: { provider: { sort: "price" } } }),
      ).provider,
    ).toBe("openrouter");
    expect(
      label({
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "Hi" }],
        system: "Be brief.",
      }),
    ).toBe("anthropic");
    expect(
      label({
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
      }),
    ).toBe("anthropic");
    expect(
      body("anthropic", first, {
        system: "",
        tools: [],
        cache: { breakpoint: false },
      }),
    ).not.toContain("cache_control");
    expect(
      checkCachePrefix(
        body("anthropic", first, {
          system: "",
          tools: [],
          cache: { breakpoint: false },
        }),
        body("anthropic", second, {
          system: "",
          tools: [],
          cache: { breakpoint: false },
        }),
      ).provider,
    ).toBe("anthropic");
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
