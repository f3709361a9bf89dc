import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  anyMessage,
  anySavedConversation,
} from "../../../../test/support/saved-conversation-arbitrary.js";
import { decodeConversation } from "./decode.js";
import { createHistoryEncodingCache, encodeConversation } from "./encode.js";
import type { SavedConversation } from "./conversation-schema.js";
import { ITEM_TYPES } from "./items.js";

function decodeOrFail(bytes: Uint8Array): SavedConversation {
  const result = decodeConversation(bytes);
  if (!result.ok) throw new Error(`unreadable: ${result.reason.message}`);
  return result.conversation;
}

const runs = { numRuns: 200 };

describe("format 1 round trips (property tests over generated conversations)", () => {
  it("A6 A7 A8 A9 A11 decode(encode(x)) equals x", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        expect(decodeOrFail(encodeConversation(conversation))).toEqual(conversation);
      }),
      runs,
    );
  });

  it("A2 encode(decode(encode(x))) equals encode(x), byte for byte", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const bytes = encodeConversation(conversation);
        expect(encodeConversation(decodeOrFail(bytes)).equals(bytes)).toBe(true);
      }),
      runs,
    );
  });

  it("A2 encoding with a history cache, cold and warm, gives the same bytes as without", () => {
    fc.assert(
      fc.property(
        anySavedConversation,
        fc.array(anyMessage, { maxLength: 3 }),
        (conversation, more) => {
          const cache = createHistoryEncodingCache();
          const plain = encodeConversation(conversation);
          expect(encodeConversation(conversation, cache).equals(plain)).toBe(true);
          expect(encodeConversation(conversation, cache).equals(plain)).toBe(true);
          const grown = { ...conversation, history: [...conversation.history, ...more] };
          expect(encodeConversation(grown, cache).equals(encodeConversation(grown))).toBe(true);
        },
      ),
      runs,
    );
  });

  it("A6 ids like __proto__ and constructor stay data and nothing leaks into Object.prototype", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const decoded = decodeOrFail(encodeConversation(conversation));
        for (const key of conversation.feedback.keys()) {
          expect(decoded.feedback.has(key)).toBe(true);
        }
        expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
      }),
      runs,
    );
    expect(Object.keys(Object.prototype)).toEqual([]);
  });

  it("A6 the generator covers all 13 item types and both byte variants of tool blocks", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        for (const item of conversation.items) seen.add(item.type);
        for (const message of conversation.history) {
          for (const block of message.content) {
            seen.add(block.type);
            if ("argumentsBase64" in block) seen.add("argumentsBase64");
            if ("contentBase64" in block) seen.add("contentBase64");
          }
        }
        for (const key of conversation.feedback.keys()) seen.add(`feedback:${key}`);
      }),
      { numRuns: 500 },
    );
    for (const type of ITEM_TYPES) expect(seen).toContain(type);
    for (const block of ["text", "image", "imageOmitted", "toolCall", "toolResult"]) {
      expect(seen).toContain(block);
    }
    expect(seen).toContain("argumentsBase64");
    expect(seen).toContain("contentBase64");
    expect(seen).toContain("feedback:__proto__");
    expect(seen).toContain("feedback:constructor");
  });
});
