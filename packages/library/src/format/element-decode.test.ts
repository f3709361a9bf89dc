import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { decodeConversation, decodeWholeFile } from "./decode.js";
import { ConversationElementDecoder } from "./element-decode.js";
import { emptyConversation } from "./empty.js";
import { encodeConversation } from "./encode.js";
import type { SavedConversation } from "./conversation-schema.js";

/**
 * The element-wise decoder (element-decode.ts) reads a file one value at a time, from chunks of
 * any size, and gives up on anything it doubts. These tests hold it to the whole-file decoder:
 * what it accepts, the whole-file decoder accepts with the same value, and `decodeConversation`
 * gives the same result (value or reason) as the whole-file decoder for every input. Its
 * verdict on the canonical layout does not depend on where the chunks end either (issue 31).
 */
function fedInChunks(
  bytes: Buffer,
  sizes: readonly number[],
): { conversation: SavedConversation; canonical: boolean } | undefined {
  const decoder = new ConversationElementDecoder();
  let offset = 0;
  for (let index = 0; offset < bytes.length; index++) {
    const size = Math.max(1, sizes[index % sizes.length] ?? 1);
    if (!decoder.feed(bytes.subarray(offset, offset + size))) return undefined;
    offset += size;
  }
  const conversation = decoder.finish();
  return conversation === undefined ? undefined : { conversation, canonical: decoder.canonical };
}

const CHUNKINGS: readonly (readonly number[])[] = [[1], [3, 5], [1, 7, 64, 4096]];

/** Both decoders agree on `bytes`, fed whole and in chunks of the given sizes. */
function expectAgreement(bytes: Buffer, chunkings = CHUNKINGS): boolean {
  const whole = decodeWholeFile(bytes);
  const decoded = decodeConversation(bytes);
  // The whole-file decoder does not look at the layout.
  expect(decoded.ok ? { ...decoded, canonical: undefined } : decoded).toEqual(whole);
  for (const chunking of [[bytes.length], ...chunkings]) {
    const chunked = fedInChunks(bytes, chunking);
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
          expect(fedInChunks(bytes, sizes)).toBeDefined();
        },
      ),
      { numRuns: 150 },
    );
  });

  it("A6 reads files that are not canonical: compact, reordered members, CRLF and tabs", () => {
    const value = JSON.parse(sample.toString("utf8")) as Record<string, unknown>;
    const compact = Buffer.from(JSON.stringify(value));
    const reordered = Buffer.from(
      JSON.stringify(Object.fromEntries(Object.entries(value).reverse()), null, "\t"),
    );
    const crlf = Buffer.from(sample.toString("utf8").replaceAll("\n", "\r\n"));
    for (const bytes of [compact, reordered, crlf]) {
      expect(expectAgreement(bytes)).toBe(true);
      expect(fedInChunks(bytes, [5])).toBeDefined();
    }
  });

  it("A14 truncated at every position: unreadable with the whole-file decoder's reason", () => {
    for (let end = 0; end < sample.length; end += 7) {
      expect(expectAgreement(sample.subarray(0, end), [[1, 13]])).toBe(false);
    }
  });

  it("A14 refuses what the whole-file decoder refuses, with the same reason", () => {
    const text = sample.toString("utf8");
    const cases: Record<string, string> = {
      "a repeated key inside an element": text.replace(
        '"type" : "user"',
        '"type" : "user", "type" : "user"',
      ),
      "a repeated top-level key": text.replace('"model" : "m"', '"model" : "m",\n  "model" : "n"'),
      "an unknown top-level key": text.replace('"model" : "m"', '"model" : "m",\n  "extra" : 1'),
      "__proto__ at the top": text.replace('"model" : "m"', '"model" : "m",\n  "__proto__" : {}'),
      "__proto__ in an element": text.replace(
        '"type" : "user"',
        '"type" : "user", "__proto__" : 1',
      ),
      "a bad escape": text.replace("héllo", "h\\xllo"),
      "a short \\u escape": text.replace("héllo", "h\\u12"),
      "a raw control character": text.replace("héllo", "h\u0001llo"),
      "a number too large": text.replace('"formatVersion" : 1', '"formatVersion" : 1e400'),
      "a newer version": text.replace('"formatVersion" : 1', '"formatVersion" : 2'),
      "a wrong type in an element": text.replace('"type" : "user"', '"type" : 7'),
      "a trailing comma in an array": text.replace(/\}\n {2}\],/, "},\n  ],"),
      "a missing comma between elements": text.replace(/\},\n {4}\{/, "}\n    {"),
      "text after the document": `${text}x`,
      "two documents": `${text}${text}`,
      "an array at the top": `[${text}]`,
      "a byte order mark": `\ufeff${text}`,
      "mismatched brackets": text.replace(/\}\n {2}\],/, "]\n  ],"),
      "a quote left open": text.replace('"m"', '"m'),
    };
    for (const [name, mutated] of Object.entries(cases)) {
      expect(mutated, name).not.toBe(text);
      expect(expectAgreement(Buffer.from(mutated, "utf8")), name).toBe(false);
    }
  });

  it("A14 escaped lone surrogates are read as the whole-file decoder reads them", () => {
    const text = sample.toString("utf8");
    for (const escape of ["\\ud800", "\\udfff", "\\ud83d", "\\ud83d\\ude00"]) {
      for (const at of ["héllo", "デザイン"]) {
        const bytes = Buffer.from(text.replaceAll(at, `${escape}${at}`), "utf8");
        const whole = decodeWholeFile(bytes);
        expect(expectAgreement(bytes)).toBe(whole.ok);
        expect(fedInChunks(bytes, [1])?.conversation).toEqual(
          whole.ok ? whole.conversation : undefined,
        );
      }
    }
  });

  it("A14 invalid UTF-8, also split across chunks, is not UTF-8 for both decoders", () => {
    const text = sample.toString("utf8");
    const at = sample.indexOf("héllo") + 1;
    // A UTF-8-encoded lone surrogate (ED A0 80), an overlong form and a cut sequence.
    for (const bad of [
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0xe3, 0x83],
    ]) {
      const bytes = Buffer.concat([sample.subarray(0, at), Buffer.from(bad), sample.subarray(at)]);
      expect(
        expectAgreement(bytes, [
          [at + 1, 1],
          [at, 1],
        ]),
      ).toBe(false);
      expect(decodeConversation(bytes)).toMatchObject({ ok: false, reason: { kind: "notUtf8" } });
    }
    // Between elements, outside strings.
    const between = Buffer.from(text.replace("},\n    {", "},\n \u00a0   {"), "utf8");
    expect(expectAgreement(between)).toBe(false);
  });

  it("A14 nesting past the strict parser's limit inside an element is refused as before", () => {
    const deep = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);
    for (const levels of [990, 997, 998, 999, 1000, 5000]) {
      const text = sample
        .toString("utf8")
        .replace('"type" : "user"', `"type" : "user", "deep" : ${deep(levels)}`);
      expect(expectAgreement(Buffer.from(text))).toBe(false);
    }
  });

  it("A6 a single value larger than many chunks is read once the chunks hold it", () => {
    const long = "ボ".repeat(300_000) + "\\" + '"';
    const bytes = encodeConversation(conversationWithTexts([long, "short"]));
    const decoded = fedInChunks(bytes, [4096]);
    expect(decoded?.conversation.history[0]?.content[0]).toEqual({ type: "text", text: long });
    expect(decoded?.canonical).toBe(true);
    expect(expectAgreement(bytes, [[65_536], [4096, 1]])).toBe(true);
  });
});
