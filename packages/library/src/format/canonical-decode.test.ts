import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { goldenCases } from "../../../../test/support/canonical-json-cases.js";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import type { SavedConversation } from "./conversation-schema.js";
import { decodeConversation } from "./decode.js";
import { ConversationElementDecoder } from "./element-decode.js";
import { encodeConversation } from "./encode.js";
import { NEED_MORE, newValueEnd, valueEnd } from "./json-bytes.js";
import { decodeQuicklyOrDoubt } from "./quick-decode.js";

// Issue 31: the decoders find whether the bytes are the canonical encoding of what they return
// in the pass that decodes them, so that the first save after opening never waits for a check.
// Escapes, numbers and layouts one by one are cases of the table test/support/decoder-cases.ts.

/**
 * The verdicts of the decoders the archive uses: element-wise (given the whole file, and given
 * it 7 bytes at a time) and quick (for files up to 8 MiB).
 */
function verdicts(bytes: Uint8Array): boolean[] {
  const whole = decodeConversation(bytes);
  const decoder = new ConversationElementDecoder();
  for (let offset = 0; offset < bytes.length; offset += 7) {
    decoder.feed(bytes.subarray(offset, offset + 7));
  }
  const chunked = decoder.finish();
  const quick = decodeQuicklyOrDoubt(bytes);
  if (!whole.ok || chunked === undefined || quick?.ok !== true) {
    throw new Error("expected a readable conversation");
  }
  return [whole.canonical ?? false, decoder.canonical, quick.canonical ?? false];
}

/** Keys the engine lists before the others ("7"), which the decoders count as out of order. */
function hasIndexKey(conversation: SavedConversation): boolean {
  const maps = [
    conversation.feedback,
    conversation.skillCards,
    conversation.lintRuleCards,
    conversation.approvalCards,
    ...conversation.sentFacts.map((fact) => fact.sections ?? new Map<string, string>()),
  ];
  return maps.some((map) => [...map.keys()].some((key) => /^[0-9]+$/.test(key)));
}

describe("the canonical verdict of decoding (issue 31)", () => {
  it("issue 31 A2 the canonical bytes of any conversation are found canonical while decoding", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const expected = !hasIndexKey(conversation);
        expect(verdicts(encodeConversation(conversation))).toEqual([expected, expected, expected]);
      }),
      { numRuns: 100 },
    );
  });

  it("issue 31 A2 the same conversation laid out differently, or with keys in another order, is not canonical", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const bytes = encodeConversation(conversation);
        const text = bytes.toString("utf8");
        const value = JSON.parse(text) as Record<string, unknown>;
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        const variants = {
          compact: JSON.stringify(value),
          reordered: JSON.stringify(reversed, null, 2).replaceAll('": ', '" : ') + "\n",
          "two final line breaks": text + "\n",
          "no final line break": text.slice(0, -1),
          "a tab for two spaces": text.replace("\n  ", "\n\t"),
          "no space before a colon": text.replace('" : ', '": '),
          "a space before a comma": text.replace(",\n", " ,\n"),
          "a blank line": text.replace(",\n", ",\n\n"),
          "one more space of indent": text.replace('\n    "', '\n     "'),
          "CR LF line breaks": text.replaceAll("\n", "\r\n"),
        };
        for (const [name, variant] of Object.entries(variants)) {
          if (variant === text) continue;
          expect(verdicts(Buffer.from(variant)), name).toEqual([false, false, false]);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("issue 31 A2 the layout scan accepts every golden vector of the canonical writer", () => {
    for (const golden of goldenCases) {
      const bytes = readFileSync(
        join(
          import.meta.dirname,
          "../../../../test/fixtures/canonical-json",
          `${golden.name}.json`,
        ),
      );
      const found = newValueEnd();
      valueEnd(bytes, 0, found);
      expect(found.end, golden.name).not.toBe(NEED_MORE);
      expect([found.canonical, bytes.subarray(found.end).toString()], golden.name).toEqual([
        true,
        "\n",
      ]);
    }
  });
});
