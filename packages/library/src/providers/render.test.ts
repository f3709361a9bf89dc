import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isVerbatimError } from "../core/errors.js";
import { IMAGE_OMITTED_TEXT, type Message } from "../history/message.js";
import { renderRequest } from "./render.js";
import { PROVIDER_IDS, type ProviderId, type RenderInput, type RenderOptions } from "./types.js";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]);
const SHA = "a".repeat(64);
const images = (sha: string) => (sha === SHA ? PNG : undefined);
const options: RenderOptions = { model: "m", maxTokens: 100 };

function render(provider: ProviderId, history: Message[], extra: Partial<RenderInput> = {}) {
  return renderRequest(provider, { history, images, options, ...extra });
}

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return isVerbatimError(error) ? error.code : "other";
  }
  return undefined;
}

describe("renderers", () => {
  it("A26 Anthropic body: fixed key order, blocks, tool results first, one breakpoint on the newest block", () => {
    const history: Message[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "画像 🎨" },
          { type: "image", sha256: SHA, mimeType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "ok" },
          { type: "toolCall", id: "t1", name: "f", arguments: '{"b": 1,"a":"x"}' },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "toolResult", callID: "t1", toolName: "f", isError: true, contentBase64: "/w==" },
        ],
      },
      { role: "user", content: [{ type: "imageOmitted", mimeType: "image/png" }] },
    ];
    const { body, warnings } = render("anthropic", history, {
      options: {
        ...options,
        system: "sys",
        tools: [{ name: "f", description: "d", inputSchema: { type: "object", properties: {} } }],
      },
    });
    expect(warnings).toEqual([]);
    expect(body).toBe(
      '{"model":"m","max_tokens":100,"system":"sys","tools":[{"name":"f","description":"d","input_schema":{"properties":{},"type":"object"}}],"messages":[' +
        '{"role":"user","content":[{"type":"text","text":"画像 🎨"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR/8A"}}]},' +
        '{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"f","input":{"b": 1,"a":"x"}}]},' +
        `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"\uFFFD","is_error":true},{"type":"text","text":${JSON.stringify(IMAGE_OMITTED_TEXT)},"cache_control":{"type":"ephemeral"}}]}],` +
        '"stream":true}',
    );
  });

  it("A27 the Anthropic breakpoint moves to the newest message; 1h TTL; none when disabled", () => {
    const one = render("anthropic", [user("a")], {
      options: { ...options, cache: { ttl: "1h" } },
    }).body;
    expect(one).toContain('"text":"a","cache_control":{"type":"ephemeral","ttl":"1h"}');
    const two = render("anthropic", [
      user("a"),
      { role: "assistant", content: [{ type: "text", text: "b" }] },
      user("c"),
    ]).body;
    expect(two).toContain('{"type":"text","text":"a"}');
    expect(two).toContain('{"type":"text","text":"c","cache_control":{"type":"ephemeral"}}');
    expect(
      render("anthropic", [user("a")], { options: { ...options, cache: { breakpoint: false } } })
        .body,
    ).not.toContain("cache_control");
  });

  it("A27 a second Anthropic breakpoint marks the previous request's last block when 20 or more blocks were added", () => {
    const before: Message[] = [user("start")];
    const many: Message = {
      role: "user",
      content: Array.from({ length: 20 }, (_, index) => ({
        type: "text" as const,
        text: `t${index}`,
      })),
    };
    const history: Message[] = [
      ...before,
      { role: "assistant", content: [{ type: "text", text: "x" }] },
      many,
    ];
    const marked = render("anthropic", history, {
      options: { ...options, cache: { previousMessageCount: 1 } },
    }).body;
    expect(marked.match(/cache_control/g)?.length).toBe(2);
    expect(marked).toContain('{"type":"text","text":"start","cache_control":{"type":"ephemeral"}}');
    const few: Message[] = [
      ...before,
      { role: "assistant", content: [{ type: "text", text: "x" }] },
      user("y"),
    ];
    const single = render("anthropic", few, {
      options: { ...options, cache: { previousMessageCount: 1 } },
    }).body;
    expect(single.match(/cache_control/g)?.length).toBe(1);
  });

  it("A27 OpenAI prompt_cache_key; OpenRouter breakpoint for anthropic/ models only; others warn", () => {
    const cache = { promptCacheKey: "conv-1", ttl: "1h" as const };
    const chat = render("openai-chat", [user("a")], { options: { ...options, cache } });
    expect(chat.body).toContain('"prompt_cache_key":"conv-1"');
    expect(chat.warnings.map((warning) => warning.code)).toEqual(["cache_option_ignored"]);
    // The breakpoint hint that the conversation always passes is not worth a warning.
    const hinted = render("openai-chat", [user("a")], {
      options: { ...options, cache: { previousMessageCount: 1 } },
    });
    expect(hinted.warnings).toEqual([]);
    expect(
      render("openai-responses", [user("a")], {
        options: { ...options, cache: { promptCacheKey: "k" } },
      }).body,
    ).toContain('"prompt_cache_key":"k"');
    const claude = render("openrouter", [user("a")], {
      options: { ...options, model: "anthropic/claude-sonnet-4.5" },
    });
    expect(claude.body).toContain(
      '{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}',
    );
    expect(
      render("openrouter", [user("a")], { options: { ...options, model: "openai/gpt-5" } }).body,
    ).not.toContain("cache_control");
    const keyed = render("openrouter", [user("a")], {
      options: { ...options, cache: { promptCacheKey: "k" } },
    });
    expect(keyed.body).not.toContain("prompt_cache_key");
    expect(keyed.warnings.map((warning) => warning.code)).toEqual(["cache_option_ignored"]);
    expect(render("gemini", [user("a")], { options: { ...options, cache } }).warnings).toHaveLength(
      1,
    );
  });

  it("argument rule: a JSON object is sent as its bytes, empty as {}, anything else wrapped with a warning", () => {
    const call = (args: string): Message[] => [
      user("u"),
      { role: "assistant", content: [{ type: "toolCall", id: "c", name: "f", arguments: args }] },
    ];
    for (const provider of ["anthropic", "gemini"] as const) {
      const key = provider === "anthropic" ? '"input":' : '"args":';
      expect(render(provider, call('{ "z" : [1, 2],\n "a": "\\u00e9" }')).body).toContain(
        `${key}{ "z" : [1, 2],\n "a": "\\u00e9" }`,
      );
      expect(render(provider, call("")).body).toContain(`${key}{}`);
      const invalid = render(provider, call('{"a": 1'));
      expect(invalid.body).toContain(`${key}{"invalid_json_arguments":"{\\"a\\": 1"}`);
      expect(invalid.warnings.map((warning) => warning.code)).toEqual(["arguments_not_object"]);
      expect(render(provider, call("[1]")).body).toContain(
        `${key}{"invalid_json_arguments":"[1]"}`,
      );
      expect(render(provider, call('{"a":1,"a":2}')).warnings).toHaveLength(1);
    }
    for (const provider of ["openai-chat", "openai-responses", "openrouter"] as const) {
      const rendered = render(provider, call('{"a": 1'));
      expect(rendered.body).toContain('"arguments":"{\\"a\\": 1"');
      expect(rendered.warnings).toEqual([]);
    }
  });

  it("A11 argumentsBase64 and contentBase64 are sent as their UTF-8 decoding with U+FFFD", () => {
    const history: Message[] = [
      user("u"),
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "c", name: "f", argumentsBase64: "eyJhIjoi/yJ9" }],
      },
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID: "c",
            toolName: "f",
            isError: false,
            contentBase64: "aGk//w==",
          },
        ],
      },
    ];
    for (const provider of PROVIDER_IDS) {
      const { body } = render(provider, history);
      expect(body).toContain("hi?\uFFFD");
      expect(body).toMatch(/\{\\?"a\\?":\\?"\uFFFD\\?"\}/);
    }
  });

  it("A16 imageOmitted is sent as the placeholder text by every provider", () => {
    for (const provider of PROVIDER_IDS) {
      const { body } = render(provider, [
        { role: "user", content: [{ type: "imageOmitted", mimeType: "image/png" }] },
      ]);
      expect(body).toContain(JSON.stringify(IMAGE_OMITTED_TEXT));
    }
  });

  it("impossible input is refused with a clear error", () => {
    const missing: Message[] = [
      { role: "user", content: [{ type: "image", sha256: "b".repeat(64), mimeType: "image/png" }] },
    ];
    const callInUser: Message[] = [
      { role: "user", content: [{ type: "toolCall", id: "c", name: "f", arguments: "{}" }] },
    ];
    for (const provider of PROVIDER_IDS) {
      expect(code(() => render(provider, missing))).toBe("provider_image_missing");
      expect(code(() => render(provider, callInUser))).toBe("provider_invalid_history");
      expect(
        code(() => render(provider, [user("a")], { options: { model: "", maxTokens: 1 } })),
      ).toBe("provider_invalid_options");
      expect(
        code(() => render(provider, [user("a")], { options: { ...options, maxTokens: 0 } })),
      ).toBe("provider_invalid_options");
    }
    expect(
      code(() =>
        render("anthropic", [user("a")], { options: { ...options, extras: { messages: [] } } }),
      ),
    ).toBe("provider_extras_conflict");
    expect(code(() => renderRequest("nope" as ProviderId, { history: [], images, options }))).toBe(
      "provider_unknown",
    );
  });

  it("A26 the bytes depend on values only: extras and schemas built in another key order render the same", () => {
    const a = render("openai-responses", [user("a")], {
      options: {
        ...options,
        extras: { reasoning: { effort: "low", summary: "auto" }, include: ["x"] },
        tools: [{ name: "f", description: "", inputSchema: { type: "object", required: [] } }],
      },
    }).body;
    const b = render("openai-responses", [user("a")], {
      options: {
        ...options,
        extras: { include: ["x"], reasoning: { summary: "auto", effort: "low" } },
        tools: [{ name: "f", description: "", inputSchema: { required: [], type: "object" } }],
      },
    }).body;
    expect(a).toBe(b);
    expect(
      a.endsWith('"stream":true,"include":["x"],"reasoning":{"effort":"low","summary":"auto"}}'),
    ).toBe(true);
  });

  it("A26 a second render of the same history (blocks from the cache) gives the same bytes and warnings", () => {
    const history: Message[] = [
      user("a"),
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "c", name: "f", arguments: "not json" }],
      },
      {
        role: "tool",
        content: [{ type: "toolResult", callID: "c", toolName: "f", isError: false, content: "r" }],
      },
    ];
    for (const provider of PROVIDER_IDS) {
      const first = render(provider, history);
      const second = render(provider, history);
      expect(second).toEqual(first);
      const longer = render(provider, [user("z"), ...history]);
      expect(longer.warnings.map((warning) => warning.where)).toEqual(
        first.warnings.map((warning) => warning.where.replace("history[1]", "history[2]")),
      );
    }
  });

  it("empty text blocks are not sent, with a warning", () => {
    const { body, warnings } = render("anthropic", [
      {
        role: "user",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "x" },
        ],
      },
    ]);
    expect(body).not.toContain('"text":""');
    expect(warnings.map((warning) => warning.code)).toEqual(["empty_text_dropped"]);
  });

  it("A23 signed material is sent with its assistant message, only to its own provider", () => {
    const history: Message[] = [
      user("q"),
      { role: "assistant", content: [{ type: "toolCall", id: "c", name: "f", arguments: "{}" }] },
    ];
    const material = {
      leading: [{ type: "thinking", thinking: "hm", signature: "sig" }],
      blockSignatures: [{ block: 0, signature: "gsig" }],
      trailing: [],
      reasoningDetails: [{ type: "reasoning.text", text: "r" }],
    };
    const anthropic = render("anthropic", history, {
      signed: [{ messageIndex: 1, material: { provider: "anthropic", ...material } }],
    });
    expect(anthropic.body).toContain(
      '"content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"tool_use"',
    );
    const gemini = render("gemini", history, {
      signed: [{ messageIndex: 1, material: { provider: "gemini", ...material, leading: [] } }],
    });
    expect(gemini.body).toContain('"args":{}},"thoughtSignature":"gsig"}');
    const openrouter = render("openrouter", history, {
      signed: [{ messageIndex: 1, material: { provider: "openrouter", ...material } }],
    });
    expect(openrouter.body).toContain('"reasoning_details":[{"type":"reasoning.text","text":"r"}]');
    const other = render("openai-chat", history, {
      signed: [{ messageIndex: 1, material: { provider: "anthropic", ...material } }],
    });
    expect(other.body).not.toContain("thinking");
    expect(other.warnings.map((warning) => warning.code)).toEqual(["signed_material_ignored"]);
  });

  it("A24 every history block appears, in order, in every provider's body", () => {
    const text = fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((value) => value.trim() !== "" && !/["\\\u0000-\u001f]/.test(value));
    const turn = fc.tuple(text, fc.array(fc.tuple(text, fc.boolean()), { maxLength: 3 }), text);
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 4 }), (turns) => {
        const history: Message[] = [];
        const expected: string[] = [];
        turns.forEach(([question, calls, answer], turnIndex) => {
          history.push(user(`Q${turnIndex}:${question}`));
          expected.push(`Q${turnIndex}:${question}`);
          if (calls.length > 0) {
            history.push({
              role: "assistant",
              content: calls.map(([argument], index) => ({
                type: "toolCall" as const,
                id: `c${turnIndex}_${index}`,
                name: "tool",
                arguments: JSON.stringify({ v: argument }),
              })),
            });
            history.push({
              role: "tool",
              content: calls.map(([argument, isError], index) => ({
                type: "toolResult" as const,
                callID: `c${turnIndex}_${index}`,
                toolName: "tool",
                isError,
                content: `R${turnIndex}_${index}:${argument}`,
              })),
            });
            calls.forEach(([argument], index) => expected.push(`c${turnIndex}_${index}`, argument));
            calls.forEach((_, index) => expected.push(`R${turnIndex}_${index}:`));
          }
          history.push({
            role: "assistant",
            content: [{ type: "text", text: `A${turnIndex}:${answer}` }],
          });
          expected.push(`A${turnIndex}:${answer}`);
        });
        for (const provider of PROVIDER_IDS) {
          const body = render(provider, history).body;
          const decoded = JSON.stringify(JSON.parse(body));
          let position = 0;
          for (const piece of expected) {
            const found = decoded.indexOf(JSON.stringify(piece).slice(1, -1), position);
            if (found < 0) throw new Error(`${provider}: ${piece} missing or out of order`);
            position = found;
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
