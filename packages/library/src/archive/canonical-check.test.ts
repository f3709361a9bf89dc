import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { decodeConversation } from "../format/decode.js";
import { emptyConversation } from "../format/empty.js";
import { encodeConversation } from "../format/encode.js";
import type { SavedConversation } from "../format/conversation-schema.js";
import { isCanonicalEncoding } from "./canonical-check.js";

function decoded(bytes: Uint8Array): SavedConversation {
  const result = decodeConversation(bytes);
  if (!result.ok) throw new Error(result.reason.message);
  return result.conversation;
}

describe("the canonical check at open", () => {
  it("A2 the canonical bytes of any conversation are recognised as canonical once decoded", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const bytes = encodeConversation(conversation);
        expect(isCanonicalEncoding(decoded(bytes), bytes)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("A2 the same conversation laid out differently, or with keys in another order, is not canonical", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const bytes = encodeConversation(conversation);
        const value = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
        const compact = Buffer.from(JSON.stringify(value));
        expect(isCanonicalEncoding(decoded(compact), compact)).toBe(false);
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        const reordered = Buffer.from(
          JSON.stringify(reversed, null, 2).replaceAll('": ', '" : ') + "\n",
        );
        expect(isCanonicalEncoding(decoded(reordered), reordered)).toBe(false);
        const trailing = Buffer.concat([bytes, Buffer.from("\n")]);
        expect(isCanonicalEncoding(decoded(trailing), trailing)).toBe(false);
      }),
      { numRuns: 30 },
    );
  });

  it("A2 an escape written differently (\\u0041 for A) is not canonical", () => {
    const bytes = encodeConversation({ ...emptyConversation(), model: "A" });
    const text = bytes.toString("utf8");
    expect(isCanonicalEncoding(decoded(bytes), bytes)).toBe(true);
    const escaped = Buffer.from(text.replace('"A"', '"\\u0041"'));
    expect(escaped.equals(bytes)).toBe(false);
    expect(isCanonicalEncoding(decoded(escaped), escaped)).toBe(false);
  });
});
