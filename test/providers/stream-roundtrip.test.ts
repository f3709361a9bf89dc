/**
 * Round trip of the parsers against the local servers' wire writers (laid out after the
 * captured bodies of test/fixtures/providers/): any text and tool calls the "model" writes,
 * streamed or whole, come back as the same history blocks, byte for byte.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createStreamParser,
  parseResponse,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import { SseDecoder } from "../../packages/library/src/internal/index.js";
import { writeAnthropic } from "../support/provider-servers/anthropic.js";
import { writeGemini } from "../support/provider-servers/gemini.js";
import type { ScriptedRound, WireWriter } from "../support/provider-servers/harness.js";
import { writeChat } from "../support/provider-servers/openai-chat.js";
import { writeResponses } from "../support/provider-servers/openai-responses.js";

const writers: Record<ProviderId, WireWriter> = {
  anthropic: writeAnthropic,
  "openai-chat": writeChat(false),
  "openai-responses": writeResponses,
  gemini: writeGemini,
  openrouter: writeChat(true),
};

const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 });
const json = fc.dictionary(
  // Integer-like keys are left out: JavaScript orders them first in a parsed object
  // (docs/providers.md, "Known limits", for arguments a provider returns as an object).
  fc.string({ unit: "grapheme", maxLength: 8 }).filter((key) => !/^(0|[1-9][0-9]*)$/.test(key)),
  fc.oneof(text, fc.integer(), fc.boolean()),
  {
    maxKeys: 4,
  },
);
const round = fc.record({
  text: fc.option(text, { nil: undefined }),
  thinking: fc.option(text, { nil: undefined }),
  calls: fc.array(json, { maxLength: 3 }),
});

function parse(provider: ProviderId, scripted: ScriptedRound, stream: boolean, split: number) {
  const reply = writers[provider](scripted, stream, "model-x", 1);
  if (!stream) return parseResponse(provider, reply.body, "model-x");
  const bytes = Buffer.from(reply.body, "utf8");
  const decoder = new SseDecoder();
  const parser = createStreamParser(provider, "model-x");
  for (let offset = 0; offset < bytes.length; offset += split) {
    for (const event of decoder.push(bytes.subarray(offset, offset + split))) parser.push(event);
  }
  for (const event of decoder.end()) parser.push(event);
  return parser.finish();
}

describe("stream and JSON round trip", () => {
  it.each(["anthropic", "openai-chat", "openai-responses", "gemini", "openrouter"] as const)(
    "A11 %s: text and tool-call bytes come back as written",
    (provider) => {
      fc.assert(
        fc.property(
          round,
          fc.boolean(),
          fc.integer({ min: 1, max: 17 }),
          (generated, stream, split) => {
            const toolCalls = generated.calls.map((args, index) => ({
              id: `call_${index}`,
              name: `tool_${index}`,
              arguments: JSON.stringify(args),
            }));
            const scripted: ScriptedRound = {
              ...(generated.text === undefined ? {} : { text: generated.text }),
              ...(generated.thinking === undefined ? {} : { thinking: generated.thinking }),
              ...(toolCalls.length === 0 ? {} : { toolCalls }),
            };
            const result = parse(provider, scripted, stream, split);
            const texts = result.message.content
              .filter((block) => block.type === "text")
              .map((block) => block.type === "text" && block.text);
            expect(texts.join("")).toBe(generated.text ?? "");
            const calls = result.message.content.filter((block) => block.type === "toolCall");
            expect(calls.map((call) => call.type === "toolCall" && call.name)).toEqual(
              toolCalls.map((call) => call.name),
            );
            calls.forEach((call, index) => {
              const written = toolCalls[index]!;
              if (call.type !== "toolCall" || !("arguments" in call))
                throw new Error("expected text arguments");
              // Gemini sends arguments as an object: they come back as its compact JSON.
              if (provider === "gemini")
                expect(JSON.parse(call.arguments)).toEqual(JSON.parse(written.arguments));
              else expect(call.arguments).toBe(written.arguments);
              if (provider !== "gemini") expect(call.id).toBe(written.id);
            });
            expect(result.stopReason).toBe(toolCalls.length > 0 ? "tool_use" : "end");
            expect(JSON.stringify(result.message)).not.toContain("signature");
            if (generated.thinking !== undefined && provider !== "openai-chat") {
              expect(result.panel.find((part) => part.kind === "thinking")).toEqual({
                kind: "thinking",
                text: generated.thinking,
              });
            }
          },
        ),
        { numRuns: 60 },
      );
    },
  );
});
