/**
 * The parsers read real provider response bodies: the captured streams and JSON bodies of
 * test/fixtures/providers/ (test/fixtures/providers/SOURCES.md says where each came from),
 * fed to the SSE decoder in pieces of 5 bytes so UTF-8 sequences and lines are split.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SseDecoder,
  createStreamParser,
  parseResponse,
  type ProviderId,
  type RoundResult,
} from "../../src/providers/index.js";

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
    const result = parseStream("anthropic", "anthropic/thinking-stream.sse");
    expect(result.message.content).toEqual([{ type: "text", text: "27 * 453 = 12,231" }]);
    expect(result.panel[0]).toEqual({
      kind: "thinking",
      text: "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3",
    });
    expect(result.signed.leading).toEqual([
      {
        type: "thinking",
        thinking:
          "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3",
        signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...",
      },
    ]);
    expect(JSON.stringify(result.message)).not.toContain("signature");
  });

  it("A23 Anthropic web search: results enter the history as text, the encrypted blocks stay in the turn", () => {
    const result = parseResponse(
      "anthropic",
      fixture("anthropic/web-search.json").toString("utf8"),
      "m",
    );
    expect(result.message.content).toEqual([
      { type: "text", text: "I'll search for when Claude Shannon was born." },
      {
        type: "text",
        text: "[Web search: claude shannon birth date]\n- Claude Shannon - Wikipedia <https://en.wikipedia.org/wiki/Claude_Shannon>",
      },
      { type: "text", text: "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan" },
    ]);
    expect(result.panel[1]).toEqual({
      kind: "webSearch",
      query: "claude shannon birth date",
      results: "- Claude Shannon - Wikipedia <https://en.wikipedia.org/wiki/Claude_Shannon>",
    });
    expect(result.signed.leading.map((block) => (block as { type: string }).type)).toEqual([
      "server_tool_use",
      "web_search_tool_result",
    ]);
    expect(JSON.stringify(result.message)).not.toContain("encrypted");
    expect(result.usage.webSearchRequests).toBe(1);
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

  it("OpenAI Chat tool stream: arguments joined from their pieces", () => {
    const result = parseStream("openai-chat", "openai-chat/tool-stream.sse");
    expect(result.message.content).toEqual([
      {
        type: "toolCall",
        id: "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        name: "get_weather",
        arguments: '{"location":"Paris, France"}',
      },
    ]);
    expect(result.stopReason).toBe("tool_use");
  });

  it("OpenAI Chat JSON completion", () => {
    const result = parseResponse(
      "openai-chat",
      fixture("openai-chat/completion.json").toString("utf8"),
      "m",
    );
    expect(result.message.content).toEqual([
      { type: "text", text: "Hello! How can I assist you today?" },
    ]);
    expect(result.usage.input).toBe(19);
    expect(result.usage.output).toBe(10);
  });

  it("OpenAI Responses stream and JSON", () => {
    const streamed = parseStream("openai-responses", "openai-responses/stream.sse");
    expect(streamed.message.content).toEqual([{ type: "text", text: "Hi there!" }]);
    expect(streamed.usage).toEqual({
      input: 37,
      output: 11,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    const whole = parseResponse(
      "openai-responses",
      fixture("openai-responses/response.json").toString("utf8"),
      "m",
    );
    expect(whole.message.content[1]).toEqual({
      type: "toolCall",
      id: "call_12345xyz",
      name: "get_weather",
      arguments: '{"location":"Paris, France"}',
    });
    expect(whole.stopReason).toBe("tool_use");
  });

  it("A7 Gemini stream (CRLF framing): output counts thoughts, text joined", () => {
    const result = parseStream("gemini", "gemini/stream.sse");
    expect(result.message.content).toEqual([
      { type: "text", text: "The sky is blue because of Rayleigh scattering." },
    ]);
    expect(result.usage).toEqual({
      input: 9,
      output: 1034,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
  });

  it("A23 Gemini function call: arguments from args, the thought signature kept for the turn", () => {
    const result = parseResponse(
      "gemini",
      fixture("gemini/function-call.json").toString("utf8"),
      "m",
    );
    const call = result.message.content[0];
    expect(call).toMatchObject({
      type: "toolCall",
      name: "schedule_meeting",
      arguments:
        '{"attendees":["Bob","Alice"],"date":"2025-03-27","time":"10:00","topic":"Q3 planning"}',
    });
    expect(result.signed.blockSignatures).toEqual([
      { block: 0, signature: "CiwBVKhc7nKBU8cYOnP2wPWFq3b1cPLbnE9Nt5JC9jfjaVUQQYzDwdLLwBKX" },
    ]);
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
      ["openai-chat", "openai-chat/tool-stream.sse"],
      ["openai-responses", "openai-responses/stream.sse"],
      ["gemini", "gemini/stream.sse"],
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
