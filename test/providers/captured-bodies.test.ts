/**
 * The parsers read provider response bodies: the streams and JSON bodies of
 * test/fixtures/providers/, fed to the SSE decoder in pieces of 5 bytes so UTF-8 sequences and
 * lines are split. Most are captured real bodies; a few are still the providers' documented
 * examples (test/fixtures/providers/SOURCES.md says which, and where each came from).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createStreamParser,
  parseResponse,
  type ProviderId,
  type RoundResult,
} from "../../packages/library/src/providers/index.js";
import { SseDecoder } from "../../packages/library/src/internal/index.js";

const fixture = (path: string) =>
  readFileSync(new URL(`../fixtures/providers/${path}`, import.meta.url));

function parseStream(provider: ProviderId, path: string): RoundResult {
  const bytes = fixture(path);
  const decoder = new SseDecoder();
  const parser = createStreamParser(provider, "requested-model");
  for (let offset = 0; offset < bytes.length; offset += 5) {
    for (const event of decoder.push(bytes.subarray(offset, offset + 5))) parser.push(event);
  }
  for (const event of decoder.end()) parser.push(event);
  return parser.finish();
}

describe("captured provider bodies", () => {
  it("A7 Anthropic tool stream: tool call bytes as streamed, usage from the cumulative message_delta", () => {
    const result = parseStream("anthropic", "anthropic/tool-stream.sse");
    expect(result.message).toEqual({
      role: "assistant",
      content: [
        {
          type: "toolCall",
          id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
          name: "json",
          arguments:
            '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
        },
      ],
    });
    expect(result.usage).toEqual({
      input: 849,
      output: 47,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("tool_use");
    expect(result.model).toBe("claude-haiku-4-5-20251001");
    expect(result.responseId).toBe("msg_01K2JbSUMYhez5RHoK9ZCj9U");
  });

  it("A7 Anthropic JSON: input excludes cache reads and writes, cacheWrite1h is the one-hour part", () => {
    const result = parseResponse(
      "anthropic",
      fixture("anthropic/message.json").toString("utf8"),
      "m",
    );
    expect(result.message.content).toEqual([{ type: "text", text: "Hi! My name is Claude." }]);
    expect(result.usage).toEqual({
      input: 2095,
      output: 503,
      cacheRead: 3000,
      cacheWrite: 1200,
      cacheWrite1h: 1000,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("end");
  });

  it("A23 Anthropic thinking goes to the panel and the signed material, never into the history", () => {
    // A real stream: its data lines carry padding spaces before the closing brace.
    const result = parseStream("anthropic", "anthropic/thinking-stream.sse");
    const thinking =
      "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.";
    expect(result.message.content).toHaveLength(1);
    const text = result.message.content[0] as { type: string; text: string };
    expect(text.type).toBe("text");
    expect(text.text.startsWith("# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n")).toBe(
      true,
    );
    expect(text.text.endsWith("- 462 = 21 × 22 ✓")).toBe(true);
    expect(result.panel[0]).toEqual({ kind: "thinking", text: thinking });
    expect(result.signed.leading).toHaveLength(1);
    expect(result.signed.leading[0]).toMatchObject({ type: "thinking", thinking });
    expect((result.signed.leading[0] as { signature: string }).signature).toMatch(
      /^EsECCokBCBAY.*GAE=$/,
    );
    expect(JSON.stringify(result.message)).not.toContain("signature");
    expect(result.usage).toEqual({
      input: 47,
      output: 373,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.model).toBe("claude-sonnet-5");
  });

  it("A7 Anthropic cached stream: cache reads and writes from the cumulative message_delta, server tool blocks kept for the turn", () => {
    const result = parseStream("anthropic", "anthropic/cache-stream.sse");
    expect(result.message.content).toEqual([
      { type: "text", text: "The sum of the squares of the numbers 1 through 12 is **650**." },
    ]);
    expect(result.usage).toEqual({
      input: 6,
      output: 198,
      cacheRead: 6289,
      cacheWrite: 3337,
      webSearchRequests: 0,
    });
    expect(result.signed.leading.map((block) => (block as { type: string }).type)).toEqual([
      "server_tool_use",
      "bash_code_execution_tool_result",
      "server_tool_use",
      "bash_code_execution_tool_result",
    ]);
    expect(result.signed.leading[0]).toMatchObject({
      input: { command: 'for n in $(seq 1 12); do echo "$n: $((n*n))"; done' },
    });
    expect(result.stopReason).toBe("end");
  });

  it("A23 Anthropic web search: results enter the history as text, the encrypted blocks stay in the turn", () => {
    // A real response with two searches, the second finding nothing, and cited text blocks.
    const result = parseResponse(
      "anthropic",
      fixture("anthropic/web-search.json").toString("utf8"),
      "m",
    );
    const texts = result.message.content.map((block) => (block as { text: string }).text);
    expect(result.message.content.every((block) => block.type === "text")).toBe(true);
    expect(texts).toHaveLength(10);
    expect(texts[0]?.split("\n")).toHaveLength(11);
    expect(
      texts[0]?.startsWith(
        "[Web search: tech news today September 26 2024]\n- Latest News - Apple Developer <https://developer.apple.com/news/>\n",
      ),
    ).toBe(true);
    expect(texts[1]).toBe(
      "Let me search for more specific tech news from today (September 26, 2024).",
    );
    expect(texts[2]).toBe('[Web search: "September 26 2024" tech news breaking]\n(no results)');
    expect(texts[4]).toBe(
      "Caroline Ellison, Sam Bankman-Fried's right-hand woman in the FTX kerfuffle, has been sentenced to two years in prison for her part in the fuffling and ordered to pay $11 billion in restitution.",
    );
    expect(result.panel.filter((part) => part.kind === "webSearch")).toEqual([
      expect.objectContaining({ query: "tech news today September 26 2024" }),
      {
        kind: "webSearch",
        query: '"September 26 2024" tech news breaking',
        results: "(no results)",
      },
    ]);
    expect(result.signed.leading.map((block) => (block as { type: string }).type)).toEqual([
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_search_tool_result",
    ]);
    expect(JSON.stringify(result.message)).not.toContain("encrypted");
    expect(JSON.stringify(result.message)).not.toContain("EuAdCioICBgC");
    expect(result.usage).toEqual({
      input: 27118,
      output: 600,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 2,
    });
    expect(result.stopReason).toBe("end");
  });

  it("A7 OpenAI Chat stream: input = prompt_tokens minus cached_tokens", () => {
    const result = parseStream("openai-chat", "openai-chat/stream.sse");
    expect(result.message.content).toEqual([{ type: "text", text: "Hello!" }]);
    expect(result.usage).toEqual({
      input: 176,
      output: 2,
      cacheRead: 1024,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("end");
  });

  it("OpenAI Chat tool stream: two parallel calls, each call's arguments joined from their pieces", () => {
    const result = parseStream("openai-chat", "openai-chat/tool-stream.sse");
    expect(result.message.content).toEqual([
      {
        type: "toolCall",
        id: "call_lQnnsesjFMWMQ5IeWPHzR4th",
        name: "GetWeatherArgs",
        arguments: '{"city": "Edinburgh", "country": "UK", "units": "c"}',
      },
      {
        type: "toolCall",
        id: "call_2xjOUgaCdiwAcl9ZBL9LyMUU",
        name: "get_stock_price",
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}',
      },
    ]);
    expect(result.usage).toEqual({
      input: 149,
      output: 60,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("tool_use");
    expect(result.model).toBe("gpt-4o-2024-08-06");
  });

  it("OpenAI Chat JSON completion: \\u escapes decoded, usage", () => {
    const result = parseResponse(
      "openai-chat",
      fixture("openai-chat/completion.json").toString("utf8"),
      "m",
    );
    expect(result.message.content).toHaveLength(1);
    const text = (result.message.content[0] as { text: string }).text;
    expect(text.startsWith("**Holiday Name:** Galaxy Day  \n\n")).toBe(true);
    expect(text).toContain("vast darkness\u2014mirroring");
    expect(result.usage).toEqual({
      input: 16,
      output: 363,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.model).toBe("gpt-4.1-nano-2025-04-14");
    expect(result.responseId).toBe("chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU");
    expect(result.stopReason).toBe("end");
  });

  it("OpenAI Chat stream from Azure: the opening chunk with empty id, model and choices is no id", () => {
    const result = parseStream("openai-chat", "openai-chat/azure-stream.sse");
    expect(result.message.content).toEqual([{ type: "text", text: "Capital of Denmark." }]);
    expect(result.responseId).toBe("chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt");
    expect(result.model).toBe("gpt-5-nano-2025-08-07");
    expect(result.usage).toEqual({
      input: 15,
      output: 78,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("end");
  });

  it("OpenAI Responses text streams (the API reference's events, and Azure OpenAI's with content filters)", () => {
    const streamed = parseStream("openai-responses", "openai-responses/stream.sse");
    expect(streamed.message.content).toEqual([{ type: "text", text: "Hi there!" }]);
    expect(streamed.usage).toEqual({
      input: 37,
      output: 11,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    const azure = parseStream("openai-responses", "openai-responses/azure-text-stream.sse");
    expect(azure.message.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(azure.usage).toEqual({
      input: 11,
      output: 11,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(azure.responseId).toBe("resp_02ce8deeb6197db200698c5196e9588197a572bbea62d38cd1");
    expect(azure.stopReason).toBe("end");
  });

  it("A23 OpenAI Responses JSON function call after a reasoning item: the call in the history, the item kept for the turn", () => {
    const whole = parseResponse(
      "openai-responses",
      fixture("openai-responses/function-call.json").toString("utf8"),
      "m",
    );
    expect(whole.message.content).toEqual([
      {
        type: "toolCall",
        id: "call_2mhz5FtwkZnzXQkTOMtYZpZH",
        name: "semantic_scholar_search",
        arguments: '{"query":"machine learning","limit":10,"offset":0,"year":0}',
      },
    ]);
    expect(whole.signed.leading).toEqual([
      {
        id: "rs_08c7eac45286fefb006a5f41bc7b8881a3a8cc432451e96393",
        type: "reasoning",
        content: [],
        encrypted_content: "[redacted]",
        summary: [],
      },
    ]);
    expect(whole.usage).toEqual({
      input: 114,
      output: 88,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(whole.stopReason).toBe("tool_use");
    expect(whole.model).toBe("o3-2025-04-16");
  });

  it("OpenAI Responses tool stream: arguments joined from their deltas, usage from response.completed", () => {
    const result = parseStream("openai-responses", "openai-responses/tool-stream.sse");
    expect(result.message.content).toEqual([
      {
        type: "toolCall",
        id: "call_2FQdm3Br7Qb35YUBSkDR7kue",
        name: "get_weather",
        arguments: '{"city":"Beijing"}',
      },
    ]);
    expect(result.usage).toEqual({
      input: 45,
      output: 25,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("tool_use");
    expect(result.model).toBe("gpt-5.1-2025-11-13");
  });

  it("A23 OpenAI Responses JSON with encrypted reasoning: the summary goes to the panel, the item to the signed material", () => {
    const result = parseResponse(
      "openai-responses",
      fixture("openai-responses/reasoning.json").toString("utf8"),
      "m",
    );
    expect(result.message.content).toEqual([
      { type: "text", text: "12 + 7 = 19\n19 × 3 = 57\n57 × 10 = 570\n\nFinal result: 570" },
    ]);
    expect(result.panel[0]).toMatchObject({ kind: "thinking" });
    expect(
      (result.panel[0] as { text: string }).text.startsWith("**Reporting final result**"),
    ).toBe(true);
    expect(result.signed.leading).toHaveLength(1);
    expect(result.signed.leading[0]).toMatchObject({
      id: "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e",
      type: "reasoning",
    });
    expect(JSON.stringify(result.message)).not.toContain("gAAAAA");
    expect(result.usage).toEqual({
      input: 865,
      output: 163,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("end");
  });

  it("A7 A23 Gemini stream (CRLF framing): output counts thoughts, text joined, the signed empty closing part kept for the turn", () => {
    const result = parseStream("gemini", "gemini/stream.sse");
    expect(result.message.content).toEqual([
      { type: "text", text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y' },
    ]);
    expect(result.usage).toEqual({
      input: 9,
      output: 208,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.signed.trailing).toHaveLength(1);
    expect(result.signed.trailing[0]).toMatchObject({ text: "" });
    expect((result.signed.trailing[0] as { thoughtSignature: string }).thoughtSignature).toMatch(
      /^EqsFCqgFAb4\+.*cow=$/,
    );
    expect(JSON.stringify(result.message)).not.toContain("thoughtSignature");
    expect(result.model).toBe("gemini-3-pro-preview");
    expect(result.stopReason).toBe("end");
  });

  it("A23 Gemini JSON text: the thought signature on the text part is kept for the turn", () => {
    const result = parseResponse("gemini", fixture("gemini/text.json").toString("utf8"), "m");
    expect(result.message.content).toEqual([
      {
        type: "text",
        text: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.",
      },
    ]);
    expect(result.signed.blockSignatures).toEqual([
      {
        block: 0,
        signature:
          "EtoFCtcFAb4+9vtfe4MXRxQjw48U1WKrR/7lYsgFkVi/bepqsSPjY0VU7HEzkeCBIfy1fu5t9aUZ4IZ65aWagqbBrV45fc97olcg",
      },
    ]);
    expect(result.signed.trailing).toEqual([]);
    expect(result.usage).toEqual({
      input: 9,
      output: 28 + 244,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
  });

  it("A23 Gemini function call without an id: arguments from args, a stable id, the thought signature kept for the turn", () => {
    const body = fixture("gemini/function-call.json").toString("utf8");
    const result = parseResponse("gemini", body, "m");
    const call = result.message.content[0];
    expect(call).toMatchObject({
      type: "toolCall",
      name: "weather",
      arguments: '{"location":"San Francisco"}',
    });
    expect((call as { id: string }).id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(parseResponse("gemini", body, "m").message).toEqual(result.message);
    expect(result.signed.blockSignatures).toEqual([
      {
        block: 0,
        signature:
          "Eqo+Cqc+Ab4+9vtgONaaz6qwy6WXdp7gCd2w0X+Wz2gaBgY0Gv6A12JKo0y5vQwf9YQFyhMbKr1E9m17VT6HXd7jXzjaGYaE",
      },
    ]);
    expect(result.usage).toEqual({
      input: 29,
      output: 1816,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("tool_use");
  });

  it("A23 Gemini streamed function call: signed call, then an empty text part; the id is the same however the bytes are split", () => {
    const result = parseStream("gemini", "gemini/tool-stream.sse");
    expect(result.message.content).toHaveLength(1);
    expect(result.message.content[0]).toMatchObject({
      type: "toolCall",
      name: "weather",
      arguments: '{"location":"San Francisco"}',
    });
    expect(result.signed.blockSignatures).toHaveLength(1);
    expect(result.signed.trailing).toEqual([]);
    expect(result.usage.output).toBe(15 + 804);
    expect(result.stopReason).toBe("tool_use");
  });

  it("A7 Gemini cached usage: cachedContentTokenCount is a cache read taken out of the input", () => {
    const result = parseResponse(
      "gemini",
      fixture("gemini/cached-usage.json").toString("utf8"),
      "m",
    );
    expect(result.usage).toEqual({
      input: 56,
      output: 130,
      cacheRead: 64,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.stopReason).toBe("tool_use");
  });

  it("A7 OpenRouter stream: usage.cost becomes reportedCost, cache writes are split out of the input", () => {
    const result = parseStream("openrouter", "openrouter/stream.sse");
    expect(result.message.content).toEqual([{ type: "text", text: "Hello world" }]);
    expect(result.usage).toEqual({
      input: 94,
      output: 2,
      cacheRead: 0,
      cacheWrite: 100,
      webSearchRequests: 0,
      reportedCost: 0.95,
    });
    expect(result.model).toBe("anthropic/claude-sonnet-4");
  });

  it("the SSE decoder gives the same round however the bytes are split", () => {
    const streams: [ProviderId, string][] = [
      ["anthropic", "anthropic/tool-stream.sse"],
      ["anthropic", "anthropic/thinking-stream.sse"],
      ["anthropic", "anthropic/cache-stream.sse"],
      ["openai-chat", "openai-chat/tool-stream.sse"],
      ["openai-chat", "openai-chat/azure-stream.sse"],
      ["openai-responses", "openai-responses/stream.sse"],
      ["openai-responses", "openai-responses/tool-stream.sse"],
      ["openai-responses", "openai-responses/azure-text-stream.sse"],
      ["gemini", "gemini/stream.sse"],
      ["gemini", "gemini/tool-stream.sse"],
      ["openrouter", "openrouter/stream.sse"],
    ];
    for (const [provider, path] of streams) {
      const bytes = fixture(path);
      const whole = parseStream(provider, path);
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }),
          (cuts) => {
            const decoder = new SseDecoder();
            const parser = createStreamParser(provider, "requested-model");
            let start = 0;
            for (const cut of [...cuts].sort((a, b) => a - b)) {
              for (const event of decoder.push(bytes.subarray(start, cut))) parser.push(event);
              start = cut;
            }
            for (const event of decoder.push(bytes.subarray(start))) parser.push(event);
            for (const event of decoder.end()) parser.push(event);
            expect(parser.finish()).toEqual(whole);
          },
        ),
        { numRuns: 40 },
      );
    }
  });
});
