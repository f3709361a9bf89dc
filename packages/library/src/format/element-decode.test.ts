import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { feedInChunks } from "../../../../test/support/element-feed.js";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { decodeConversation, decodeWholeFile } from "./decode.js";
import { emptyConversation } from "./empty.js";
import { encodeConversation } from "./encode.js";
import type { SavedConversation } from "./conversation-schema.js";

/**
 * The element-wise decoder (element-decode.ts) reads a file one value at a time, from chunks of
 * any size, and gives up on anything it doubts. These tests hold it to the whole-file decoder:
 * what it accepts, the whole-file decoder accepts with the same value, and `decodeConversation`
 * gives the same result (value or reason) as the whole-file decoder for every input. Its
 * verdict on the canonical layout does not depend on where the chunks end either (issue 31).
 * The case lists (layouts, refusals, escapes, bad bytes, nesting) are in the one table of
 * test/support/decoder-cases.ts (decoders.test.ts); these are the generated and exhaustive ones.
 */
const CHUNKINGS: readonly (readonly number[])[] = [[1], [3, 5], [1, 7, 64, 4096]];

/** Both decoders agree on `bytes`, fed whole and in chunks of the given sizes. */
function expectAgreement(bytes: Buffer, chunkings = CHUNKINGS): boolean {
  const whole = decodeWholeFile(bytes);
  const decoded = decodeConversation(bytes);
  // The whole-file decoder does not look at the layout.
  expect(decoded.ok ? { ...decoded, canonical: undefined } : decoded).toEqual(whole);
  for (const chunking of [[bytes.length], ...chunkings]) {
    const chunked = feedInChunks(bytes, chunking);
    if (chunked === undefined) continue;
    expect(whole.ok, `accepted in chunks of ${chunking.join(",")}`).toBe(true);
    if (whole.ok) expect(chunked.conversation).toEqual(whole.conversation);
    expect(chunked.canonical, `canonical in chunks of ${chunking.join(",")}`).toBe(
      decoded.ok && decoded.canonical,
    );
  }
  return whole.ok;
}

function conversationWithTexts(texts: readonly string[]): SavedConversation {
  return {
    ...emptyConversation(),
    model: "m",
    items: texts.map((text, index) => ({ id: `i${index}`, type: "user" as const, text })),
    history: texts.map((text) => ({ role: "user" as const, content: [{ type: "text", text }] })),
  };
}

const sample = encodeConversation(
  conversationWithTexts(["héllo", "デザイン 🎨", 'quote " and \\ backslash', "line\nbreak"]),
);

describe("the element-wise decoder", () => {
  it("A6 gives the whole-file decoder's value for generated conversations, in chunks of any size", () => {
    fc.assert(
      fc.property(
        anySavedConversation,
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
        (conversation, sizes) => {
          const bytes = encodeConversation(conversation);
          expect(expectAgreement(bytes, [sizes, [1]])).toBe(true);
          // The canonical file never needs the whole-file decoder.
          expect(feedInChunks(bytes, sizes)).toBeDefined();
        },
      ),
      { numRuns: 150 },
    );
  });

  it("A14 truncated at every position: unreadable with the whole-file decoder's reason", () => {
    for (let end = 0; end < sample.length; end += 7) {
      expect(expectAgreement(sample.subarray(0, end), [[1, 13]])).toBe(false);
    }
  });

  it("A6 a single value larger than many chunks is read once the chunks hold it", () => {
    const long = "ボ".repeat(300_000) + "\\" + '"';
    const bytes = encodeConversation(conversationWithTexts([long, "short"]));
    const decoded = feedInChunks(bytes, [4096]);
    expect(decoded?.conversation.history[0]?.content[0]).toEqual({ type: "text", text: long });
    expect(decoded?.canonical).toBe(true);
    expect(expectAgreement(bytes, [[65_536], [4096, 1]])).toBe(true);
  });
});
