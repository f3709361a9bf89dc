/**
 * Fidelity defects found on real provider responses (issue 19): each case reads a real body
 * from test/fixtures/interop/providers/ (test/fixtures/interop/SOURCES.md says where each came
 * from), whole and, where the publisher recorded one, streamed (`*.chunks.txt`: one SSE data
 * payload per line), and checks that nothing the response held is dropped silently.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import type { JsonObject } from "../../packages/library/src/core/strict-json.js";
import { historyFromProviderSummary } from "../../packages/library/src/conversation/provider-summary.js";
import type { Message } from "../../packages/library/src/history/message.js";
import {
  checkCachePrefix,
  createStreamParser,
  parseResponse,
  renderRequest,
  type ProviderId,
  type RoundResult,
} from "../../packages/library/src/providers/index.js";

const fixtureText = (path: string) =>
  readFileSync(new URL(`../fixtures/interop/providers/${path}`, import.meta.url), "utf8");

function parseWhole(provider: ProviderId, path: string): RoundResult {
  return parseResponse(provider, fixtureText(path), "requested-model");
}

function parseChunks(provider: ProviderId, path: string): RoundResult {
  const parser = createStreamParser(provider, "requested-model");
  for (const line of fixtureText(path).split("\n")) {
    if (line.trim() !== "") parser.push({ data: line });
  }
  return parser.finish();
}

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const answer = (text: string): Message => ({
  role: "assistant",
  content: [{ type: "text", text }],
});
const noImages = () => undefined;

describe("OpenAI Responses custom_tool_call (real shape)", () => {
  const expected = {
    type: "toolCall",
    id: "call_custom_sql_001",
    name: "write_sql",
    arguments: "SELECT * FROM users WHERE age > 25",
  };

  it("custom_tool_call is kept as a tool call with its raw input, and the round stops for the tool", () => {
    for (const result of [
      parseWhole("openai-responses", "openai-responses/custom-tool.json"),
      parseChunks("openai-responses", "openai-responses/custom-tool.chunks.txt"),
    ]) {
      expect(result.message.content).toEqual([expected]);
      expect(result.stopReason).toBe("tool_use");
    }
  });

  it("custom_tool_call renders back to Responses as the same custom call and its result as custom_tool_call_output", () => {
    const result = parseWhole("openai-responses", "openai-responses/custom-tool.json");
    const history: Message[] = [
      user("Write a query"),
      result.message,
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID: "call_custom_sql_001",
            toolName: "write_sql",
            isError: false,
            content: "3 rows",
          },
        ],
      },
    ];
    const tools = [
      {
        name: "write_sql",
        description: "Writes SQL",
        inputSchema: {},
        kind: "custom" as const,
        format: { type: "text" } as JsonObject,
      },
    ];
    const { body, warnings } = renderRequest("openai-responses", {
      history,
      images: noImages,
      options: { model: "gpt-5.2-codex", maxTokens: 100, tools },
    });
    const parsed = JSON.parse(body) as { input: unknown[]; tools: unknown[] };
    expect(parsed.input.slice(1)).toEqual([
      {
        type: "custom_tool_call",
        call_id: "call_custom_sql_001",
        name: "write_sql",
        input: "SELECT * FROM users WHERE age > 25",
      },
      { type: "custom_tool_call_output", call_id: "call_custom_sql_001", output: "3 rows" },
    ]);
    expect(parsed.tools).toEqual([
      { type: "custom", name: "write_sql", description: "Writes SQL", format: { type: "text" } },
    ]);
    expect(warnings).toEqual([]);
    // The same history to a format without custom tools: the raw input as the arguments
    // (a string where the format takes one, wrapped with a warning where it takes an object).
    const chat = JSON.parse(
      renderRequest("openai-chat", {
        history,
        images: noImages,
        options: { model: "m", maxTokens: 100 },
      }).body,
    ) as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
    expect(chat.messages[1]?.tool_calls?.[0]?.function.arguments).toBe(expected.arguments);
    const anthropic = renderRequest("anthropic", {
      history,
      images: noImages,
      options: { model: "m", maxTokens: 100 },
    });
    expect(anthropic.body).toContain(
      '"input":{"invalid_json_arguments":"SELECT * FROM users WHERE age > 25"}',
    );
    expect(anthropic.warnings.map((warning) => warning.code)).toContain("arguments_not_object");
  });
});

describe("OpenAI Responses image_generation_call (real shape)", () => {
  it("image_generation_call becomes an image block of the message, its bytes in the result", () => {
    for (const result of [
      parseWhole("openai-responses", "openai-responses/image-generation-tool.json"),
      parseChunks("openai-responses", "openai-responses/image-generation-tool.chunks.txt"),
    ]) {
      const images = result.images ?? [];
      expect(images).toHaveLength(1);
      const image = images[0];
      expect(image?.mimeType).toBe("image/webp");
      expect(image?.sha256).toBe(sha256Hex(image?.bytes ?? new Uint8Array()));
      expect(result.message.content).toEqual([
        { type: "image", sha256: image?.sha256, mimeType: "image/webp" },
      ]);
      // The publisher shortened the base64 ("..." in the middle): reported, not dropped.
      expect(result.warnings?.map((warning) => warning.code)).toEqual(["image_data_invalid"]);
    }
  });

  it("a generated image renders back: inline data for Gemini, a text naming it (with a warning) elsewhere", () => {
    const result = parseWhole("openai-responses", "openai-responses/image-generation-tool.json");
    const image = (result.images ?? [])[0];
    const history: Message[] = [user("Draw a cat"), result.message, user("Thanks")];
    const images = (sha256: string) => (sha256 === image?.sha256 ? image.bytes : undefined);
    const gemini = renderRequest("gemini", {
      history,
      images,
      options: { model: "gemini-2.5-flash-image", maxTokens: 100 },
    });
    expect(gemini.body).toContain(
      '{"role":"model","parts":[{"inlineData":{"mimeType":"image/webp"',
    );
    for (const provider of ["anthropic", "openai-chat", "openai-responses"] as const) {
      const rendered = renderRequest(provider, {
        history,
        images,
        options: { model: "m", maxTokens: 100 },
      });
      expect(rendered.body).toContain(`[Generated image: image/webp, sha256 ${image?.sha256}]`);
      expect(rendered.warnings.map((warning) => warning.code)).toEqual(["generated_image_as_text"]);
    }
    // Bytes not held (a store that kept the message but not the image): named, never refused.
    for (const provider of ["gemini", "anthropic", "openai-responses"] as const) {
      const rendered = renderRequest(provider, {
        history,
        images: noImages,
        options: { model: "m", maxTokens: 100 },
      });
      expect(rendered.body).toContain(`[Generated image: image/webp, sha256 ${image?.sha256}]`);
      expect(rendered.warnings.map((warning) => warning.code)).toEqual(["generated_image_as_text"]);
    }
  });
});

describe("Anthropic usage.iterations (real shape)", () => {
  it("usage.iterations are summed: the compaction iteration's 60,385 input tokens are counted", () => {
    const whole = parseWhole("anthropic", "anthropic/compaction-iterations.json");
    expect(whole.usage).toMatchObject({ input: 60385 + 682, output: 592 + 1320 });
    const streamed = parseChunks("anthropic", "anthropic/compaction-iterations.chunks.txt");
    expect(streamed.usage).toMatchObject({ input: 60385 + 612, output: 522 + 2819 });
  });
});

describe("Anthropic citations (real shape)", () => {
  it("citations on text blocks are kept on the panel's text parts, in format 1's shape", () => {
    for (const result of [
      parseWhole("anthropic", "anthropic/web-search-citations.json"),
      parseChunks("anthropic", "anthropic/web-search-citations.chunks.txt"),
    ]) {
      const cited = result.panel.flatMap((part) =>
        part.kind === "text" ? (part.citations ?? []) : [],
      );
      expect(cited.length).toBeGreaterThan(0);
      for (const citation of cited) {
        expect(citation.url).toMatch(/^https?:\/\//);
        expect(typeof citation.title).toBe("string");
        expect(typeof citation.citedText).toBe("string");
      }
    }
    const whole = parseWhole("anthropic", "anthropic/web-search-citations.json");
    const first = whole.panel.find((part) => part.kind === "text" && part.citations);
    expect(first).toMatchObject({
      citations: expect.arrayContaining([
        expect.objectContaining({
          url: "https://acecomments.mu.nu/?post=411647",
          title: "Daily Tech News 26 September 2024",
        }),
      ]),
    });
  });
});

describe("Anthropic programmatic tool calls (real shape)", () => {
  const result = parseWhole(
    "anthropic",
    "anthropic/programmatic-tool-calling-caller-container.json",
  );
  const caller = { type: "code_execution_20250825", tool_id: "srvtoolu_01CberhXc9TgYXrCZU8bQoks" };

  it("the caller of programmatic tool calls and the response's container are kept", () => {
    expect(result.container).toEqual({
      id: "container_011CWHQB57xVregfCMPrKgew",
      expires_at: "2025-12-20T05:43:56.821156Z",
    });
    const calls = result.message.content.filter((block) => block.type === "toolCall");
    expect(calls).toHaveLength(4);
    expect(result.signed.toolCallCallers).toHaveLength(4);
    for (const entry of result.signed.toolCallCallers ?? []) {
      expect(result.message.content[entry.block]?.type).toBe("toolCall");
      expect(entry.caller).toEqual(caller);
    }
  });

  it("within the turn the caller goes back on its tool_use; the next turn's request has none", () => {
    const history: Message[] = [user("Play"), result.message];
    const within = renderRequest("anthropic", {
      history,
      images: noImages,
      options: { model: "m", maxTokens: 100 },
      signed: [{ messageIndex: 1, material: result.signed }],
    });
    expect(within.body).toContain(
      '"name":"rollDie","input":{"player":"player2"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_01CberhXc9TgYXrCZU8bQoks"}',
    );
    const next = renderRequest("anthropic", {
      history,
      images: noImages,
      options: { model: "m", maxTokens: 100 },
    });
    expect(next.body).not.toContain('"caller"');
    // The breakpoint block keeps its caller too.
    const last = JSON.parse(within.body) as { messages: { content: Record<string, unknown>[] }[] };
    const lastBlock = last.messages[1]?.content.at(-1);
    expect(lastBlock?.["cache_control"]).toBeDefined();
  });
});

describe("Anthropic web_fetch (real shape)", () => {
  it("web_fetch results are shown like web search: a panel part and history text", () => {
    for (const result of [
      parseWhole("anthropic", "anthropic/web-fetch-tool.json"),
      parseChunks("anthropic", "anthropic/web-fetch-tool.chunks.txt"),
    ]) {
      const url = "https://en.wikipedia.org/wiki/Maglemosian_culture";
      expect(result.panel).toContainEqual(
        expect.objectContaining({ kind: "webSearch", query: url, action: "fetch" }),
      );
      const texts = result.message.content.flatMap((block) =>
        block.type === "text" ? [block.text] : [],
      );
      expect(texts.some((text) => text.startsWith(`[Web fetch: ${url}]\n- `))).toBe(true);
    }
  });

  it("web_fetch errors are shown with their error code", () => {
    const result = parseWhole("anthropic", "anthropic/web-fetch-tool-error.json");
    const url =
      "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf";
    expect(result.message.content).toContainEqual({
      type: "text",
      text: `[Web fetch: ${url}]\n(fetch failed: unavailable)`,
    });
    expect(result.panel).toContainEqual({
      kind: "webSearch",
      query: url,
      results: "(fetch failed: unavailable)",
      action: "fetch",
    });
  });
});

describe("OpenAI Chat choices and content shapes", () => {
  const completion = JSON.parse(fixtureText("openai-chat/text.json")) as {
    choices: { index: number; message: { content: unknown } }[];
  };
  const firstText = completion.choices[0]?.message.content as string;

  it("a Chat response with several choices reads the first and warns (choices_ignored)", () => {
    // No public capture with n > 1 was found (SOURCES.md, "Gaps"): the real body with a
    // second choice added in the documented shape.
    const second = {
      index: 1,
      message: { role: "assistant", content: "another answer" },
      finish_reason: "stop",
    };
    const body = JSON.stringify({ ...completion, choices: [...completion.choices, second] });
    const result = parseResponse("openai-chat", body, "m");
    expect(result.message.content).toEqual([{ type: "text", text: firstText }]);
    expect(result.warnings).toEqual([expect.objectContaining({ code: "choices_ignored" })]);
    expect(parseWhole("openai-chat", "openai-chat/text.json").warnings).toBeUndefined();

    const parser = createStreamParser("openai-chat", "m");
    const chunk = (index: number, content: string) =>
      JSON.stringify({ id: "c", model: "m", choices: [{ index, delta: { content } }] });
    parser.push({ data: chunk(0, "one") });
    parser.push({ data: chunk(1, "two") });
    parser.push({ data: chunk(0, " three") });
    parser.push({ data: "[DONE]" });
    const streamed = parser.finish();
    expect(streamed.message.content).toEqual([{ type: "text", text: "one three" }]);
    expect(streamed.warnings?.map((warning) => warning.code)).toEqual(["choices_ignored"]);
  });

  it("assistant content given as a plain string (Responses, Anthropic) or as parts (Chat) is read as text", () => {
    const responses = JSON.parse(fixtureText("openai-responses/compaction.json")) as {
      output: { type: string; content?: unknown }[];
    };
    const message = responses.output.find((item) => item.type === "message");
    const parts = message?.content as { text: string }[];
    const text = parts.map((part) => part.text).join("");
    const asString = {
      ...responses,
      output: [{ ...message, content: text }],
    };
    const parsed = parseResponse("openai-responses", JSON.stringify(asString), "m");
    expect(parsed.message.content).toEqual([{ type: "text", text }]);

    const chatParts = {
      ...completion,
      choices: [
        {
          ...completion.choices[0],
          message: { role: "assistant", content: [{ type: "text", text: firstText }] },
        },
      ],
    };
    const chat = parseResponse("openai-chat", JSON.stringify(chatParts), "m");
    expect(chat.message.content).toEqual([{ type: "text", text: firstText }]);

    const anthropic = JSON.parse(fixtureText("anthropic/web-fetch-tool-error.json")) as object;
    const plain = parseResponse(
      "anthropic",
      JSON.stringify({ ...anthropic, content: "Plain answer" }),
      "m",
    );
    expect(plain.message.content).toEqual([{ type: "text", text: "Plain answer" }]);
  });
});

describe("compaction (real shapes)", () => {
  it("Anthropic compaction is kept: its summary enters the history, the native block goes back within the turn, the text after it", () => {
    const whole = parseWhole("anthropic", "anthropic/compaction-iterations.json");
    const native = (
      JSON.parse(fixtureText("anthropic/compaction-iterations.json")) as {
        content: { type: string; content?: string }[];
      }
    ).content[0];
    const summary = native?.content ?? "";
    expect(summary.length).toBeGreaterThan(100);
    for (const result of [
      whole,
      parseChunks("anthropic", "anthropic/compaction-iterations.chunks.txt"),
    ]) {
      const first = result.message.content[0];
      expect(first?.type).toBe("text");
      expect(
        first?.type === "text" && first.text.startsWith("[Compaction summary]\n## Summary"),
      ).toBe(true);
      expect(result.panel[0]).toMatchObject({ kind: "compaction" });
      expect(result.signed.nativeBlocks).toEqual([
        { block: 0, value: { type: "compaction", content: expect.any(String) } },
      ]);
    }
    expect(whole.message.content[0]).toEqual({
      type: "text",
      text: `[Compaction summary]\n${summary}`,
    });
    expect(whole.signed.leading).toEqual([]);

    const history: Message[] = [user("Summarise the algorithms"), whole.message];
    const within = renderRequest("anthropic", {
      history,
      images: noImages,
      options: { model: "claude-opus-4-6", maxTokens: 100 },
      signed: [{ messageIndex: 1, material: whole.signed }],
    });
    const assistant = (JSON.parse(within.body) as { messages: { content: unknown[] }[] })
      .messages[1];
    expect(assistant?.content[0]).toEqual({ type: "compaction", content: summary });
    // When the turn ends, a live conversation replaces everything before the block with the
    // summary (A20's form): the next two requests, on Anthropic or any other provider (A24),
    // start from it and carry nothing it replaced.
    const compacted = historyFromProviderSummary(history, {
      message: whole.message,
      block: 0,
      summary,
    });
    expect(compacted?.[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: `# Conversation so far\n${summary}` }],
    });
    const turns = [...(compacted ?? []), user("Thanks")];
    const next = (provider: ProviderId, extra: readonly Message[] = []) =>
      renderRequest(provider, {
        history: [...turns, ...extra],
        images: noImages,
        options: { model: "claude-opus-4-6", maxTokens: 100 },
      }).body;
    const later = [answer("You are welcome."), user("One more")];
    for (const provider of ["anthropic", "openai-chat", "openai-responses"] as const) {
      for (const body of [next(provider), next(provider, later)]) {
        expect(body).toContain(JSON.stringify(`# Conversation so far\n${summary}`));
        expect(body).not.toContain("Summarise the algorithms");
        expect(body).not.toContain("[Compaction summary]");
      }
      expect(checkCachePrefix(next(provider), next(provider, later))).toMatchObject({ ok: true });
    }
    // The cached prefix ends once, at the first message (the summary replaced it).
    expect(
      checkCachePrefix(within.body, next("anthropic"), { ignoreSignedMaterial: true }),
    ).toMatchObject({ ok: false, difference: { messageIndex: 0 } });
  });

  it("Responses compaction is kept for the running turn (encrypted: never stored, A23) and shown in the panel", () => {
    const result = parseWhole("openai-responses", "openai-responses/compaction.json");
    const raw = JSON.parse(fixtureText("openai-responses/compaction.json")) as {
      output: { type: string; encrypted_content?: string }[];
    };
    const item = raw.output.find((entry) => entry.type === "compaction");
    expect(result.signed.leading).toEqual([item]);
    expect(result.panel).toContainEqual({ kind: "compaction" });
    expect(result.message.content).toHaveLength(1);
    const history: Message[] = [user("Testing strategies?"), result.message];
    const within = renderRequest("openai-responses", {
      history,
      images: noImages,
      options: { model: "gpt-5.2", maxTokens: 100 },
      signed: [{ messageIndex: 1, material: result.signed }],
    });
    const native = `{"id":"${(item as { id?: string }).id ?? ""}","type":"compaction","encrypted_content":"${item?.encrypted_content ?? ""}"`;
    expect(within.body).toContain(native);
    // The next two requests: a live conversation attaches the item to its message again (the
    // provider backend keeps compaction items beyond the turn); saved and reopened, it is gone.
    const kept = { ...result.signed, leading: result.signed.leading.slice(-1) };
    const later = [
      [user("And the database layer?")],
      [user("And the database layer?"), answer("Use fixtures."), user("Thanks")],
    ];
    const bodies = later.map(
      (extra) =>
        renderRequest("openai-responses", {
          history: [...history, ...extra],
          images: noImages,
          options: { model: "gpt-5.2", maxTokens: 100 },
          signed: [{ messageIndex: 1, material: kept }],
        }).body,
    );
    for (const body of bodies) expect(body).toContain(native);
    expect(checkCachePrefix(bodies[0] ?? "", bodies[1] ?? "")).toMatchObject({ ok: true });
    const reopened = renderRequest("openai-responses", {
      history: [...history, ...(later[0] ?? [])],
      images: noImages,
      options: { model: "gpt-5.2", maxTokens: 100 },
    }).body;
    expect(reopened).not.toContain('"type":"compaction"');
  });
});
