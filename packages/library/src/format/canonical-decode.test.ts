import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { goldenCases } from "../../../../test/support/canonical-json-cases.js";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import type { SavedConversation } from "./conversation-schema.js";
import { decodeConversation } from "./decode.js";
import { emptyConversation } from "./empty.js";
import { encodeConversation } from "./encode.js";
import { NEED_MORE, newValueEnd, valueEnd } from "./json-bytes.js";
import { decodeConversationQuickly } from "./quick-decode.js";

// Issue 31: the decoders find whether the bytes are the canonical encoding of what they return
// in the pass that decodes them, so that the first save after opening never waits for a check.

/** The verdict of both decoders the archive uses (element-wise, and quick for small files). */
async function verdicts(bytes: Uint8Array): Promise<[boolean | undefined, boolean | undefined]> {
  const element = decodeConversation(bytes);
  const quick = await decodeConversationQuickly(bytes);
  if (!element.ok || !quick.ok) throw new Error("expected a readable conversation");
  return [element.canonical, quick.canonical];
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

const model = (text: string): Buffer =>
  Buffer.from(
    encodeConversation({ ...emptyConversation(), model: "M" })
      .toString("utf8")
      .replace('"M"', text),
  );

describe("the canonical verdict of decoding (issue 31)", () => {
  it("issue 31 A2 the canonical bytes of any conversation are found canonical while decoding", async () => {
    await fc.assert(
      fc.asyncProperty(anySavedConversation, async (conversation) => {
        const expected = !hasIndexKey(conversation);
        expect(await verdicts(encodeConversation(conversation))).toEqual([expected, expected]);
      }),
      { numRuns: 100 },
    );
  });

  it("issue 31 A2 the same conversation laid out differently, or with keys in another order, is not canonical", async () => {
    await fc.assert(
      fc.asyncProperty(anySavedConversation, async (conversation) => {
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
          expect(await verdicts(Buffer.from(variant)), name).toEqual([false, false]);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("issue 31 A2 escapes and numbers are canonical only as JSON.stringify writes them", async () => {
    expect(await verdicts(model('"A"'))).toEqual([true, true]);
    expect(await verdicts(model('"a\\u001fb\\n\\"\\\\\\udc00\\ud800x😀/"'))).toEqual([true, true]);
    for (const text of [
      '"\\u0041"',
      '"\\/"',
      '"\\u001F"',
      '"\\u000a"',
      '"\\ud83d\\ude00"',
      '"\\uD800"',
    ]) {
      expect(await verdicts(model(text)), text).toEqual([false, false]);
    }
    const bytes = encodeConversation(emptyConversation()).toString("utf8");
    expect(bytes).toContain('"formatVersion" : 1,');
    for (const number of ["1.0", "1e0", "10e-1"]) {
      const variant = Buffer.from(
        bytes.replace('"formatVersion" : 1,', `"formatVersion" : ${number},`),
      );
      expect(await verdicts(variant), number).toEqual([false, false]);
    }
    const usage = bytes.replace('"input" : 0,', '"input" : -0,');
    expect(usage).not.toBe(bytes);
    expect(await verdicts(Buffer.from(usage))).toEqual([false, false]);
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
