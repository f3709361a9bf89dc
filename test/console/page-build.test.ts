/**
 * The console builds a page in slices so the event loop is never blocked for long (issue 20):
 * the sliced projections and the sliced serialization give exactly what the library's
 * one-call functions give, on random conversations (text, tool calls and results, images,
 * any text).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Block } from "verbatim-llm/history";
import { modelVisibleTrajectory, projectGatewayMessagesToChatML } from "verbatim-llm/trajectory";
import {
  chatMLInSlices,
  modelVisibleInSlices,
} from "../../packages/server/src/gateway/console/project-in-slices.js";
import { jsonWithArrayInSlices } from "../../packages/server/src/gateway/console/slices.js";

const text = fc.string({ unit: "binary", maxLength: 40 });
const callId = fc.constantFrom("a", "b", "c");
const block: fc.Arbitrary<Block> = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text }),
  fc.record({
    type: fc.constant("image" as const),
    sha256: fc.constant("0".repeat(64)),
    mimeType: fc.constant("image/png"),
  }),
  fc.record({ type: fc.constant("toolCall" as const), id: callId, name: text, arguments: text }),
  fc.record({
    type: fc.constant("toolResult" as const),
    callID: callId,
    toolName: text,
    isError: fc.boolean(),
    content: text,
  }),
);
const message = fc.record({
  role: fc.constantFrom("user" as const, "assistant" as const, "tool" as const),
  content: fc.array(block, { maxLength: 4 }),
});

/** Keys that are not array indices (JavaScript puts those first in any object). */
const key = fc.string({ maxLength: 6 }).map((name) => `k${name}`);

describe("console page building in slices", () => {
  it("B9 B12 the sliced ChatML and model-visible projections equal the library's", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 30 }), async (messages) => {
        const expected = projectGatewayMessagesToChatML(messages);
        const actual = await chatMLInSlices(messages);
        expect(actual).toEqual(expected);
        expect(await modelVisibleInSlices(actual)).toEqual(modelVisibleTrajectory(expected));
      }),
      { numRuns: 500 },
    );
  });

  it("the sliced JSON text, in UTF-8, equals JSON.stringify of the whole reply", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(key, fc.jsonValue({ maxDepth: 2 })),
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 }),
        fc.dictionary(key, fc.jsonValue({ maxDepth: 2 })),
        async (before, items, after) => {
          for (const key of Object.keys(before)) delete after[key];
          const bytes = await jsonWithArrayInSlices(before, "messages", items, after);
          expect(bytes.toString("utf8")).toBe(
            JSON.stringify({ ...before, messages: items, ...after }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});
