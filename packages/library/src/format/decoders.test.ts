/**
 * The one case table of format 1 (test/support/decoder-cases.ts) run against every decoder and
 * every validator (issue 32, "one implementation per job"): the whole-file decoder (the strict
 * parser and the zod schema, which define format 1 and give the reasons), the element-wise
 * decoder (JSON.parse one value at a time and the hand-written check, kept for memory,
 * element-decode.ts), whole and in chunks, and the quick decoder (JSON.parse of the whole file
 * and the hand-written check, kept for speed on files up to 8 MiB, quick-decode.ts); the zod
 * schema and the hand-written check.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { feedInChunks } from "../../../../test/support/element-feed.js";
import {
  decoderCases,
  validatorCases,
  type DecoderCase,
} from "../../../../test/support/decoder-cases.js";
import { conversationSchema, type SavedConversation } from "./conversation-schema.js";
import {
  decodeConversation,
  decodeWholeFile,
  type ConversationDecoder,
  type DecodeResult,
} from "./decode.js";
import { decodeConversationQuickly, decodeQuicklyOrDoubt } from "./quick-decode.js";
import { validateConversation, type ConversationValidator } from "./validate.js";

/** As the archive reads a file: the element-wise decoder in chunks, its doubts to the whole file. */
function inChunks(sizes: readonly number[]): ConversationDecoder {
  return (bytes) => {
    const read = feedInChunks(bytes, sizes);
    return read === undefined ? decodeWholeFile(bytes) : { ok: true, ...read };
  };
}

const CHUNKINGS: readonly (readonly number[])[] = [[1], [3, 5], [1, 7, 64, 4096]];

const decoders: readonly (readonly [string, ConversationDecoder, boolean])[] = [
  // [name, decoder, whether it reports `canonical`]
  ["decodeWholeFile (strict parser and zod)", decodeWholeFile, false],
  ["decodeConversation (element-wise, then whole-file)", decodeConversation, true],
  ["decodeConversationQuickly (quick, then decodeConversation)", decodeConversationQuickly, true],
  ...CHUNKINGS.map(
    (sizes) => [`element-wise in chunks of ${sizes.join(",")}`, inChunks(sizes), true] as const,
  ),
];

function expectCase(entry: DecoderCase, result: DecodeResult, reportsCanonical: boolean): void {
  const { expect: expected } = entry;
  if (!expected.ok) {
    expect(result.ok ? "readable" : result.reason.message, entry.name).not.toBe("readable");
    if (result.ok) return;
    expect({
      kind: result.reason.kind,
      fieldProblem: result.reason.fieldProblem,
      path: result.reason.path,
    }).toEqual({ kind: expected.kind, fieldProblem: expected.fieldProblem, path: expected.path });
    // The one reason: the whole-file decoder's, message and all.
    expect(result).toStrictEqual(decodeWholeFile(entry.bytes));
    return;
  }
  expect(result.ok ? "readable" : result.reason.message).toBe("readable");
  if (!result.ok) return;
  const whole = decodeWholeFile(entry.bytes);
  expect(whole.ok && result.conversation).toEqual(whole.ok && whole.conversation);
  if (!reportsCanonical) expect(result.canonical).toBeUndefined();
  else if (expected.canonical !== undefined) expect(result.canonical).toBe(expected.canonical);
}

describe("format 1's decoders, one case table", () => {
  it("A6 A14 the table has readable and unreadable cases of every kind", () => {
    const kinds = new Set(
      decoderCases.map((entry) => (entry.expect.ok ? "ok" : entry.expect.kind)),
    );
    expect([...kinds].sort()).toEqual(
      [
        "ok",
        "invalidField",
        "invalidJson",
        "missingVersion",
        "newerVersion",
        "notAnObject",
        "notUtf8",
        "otherVersion",
      ].sort(),
    );
    expect(decoderCases.filter((entry) => entry.expect.ok).length).toBeGreaterThan(30);
  });

  for (const [name, decode, reportsCanonical] of decoders) {
    describe(name, () => {
      for (const entry of decoderCases) {
        it(`A6 A14 ${entry.name}`, async () => {
          expectCase(entry, await decode(entry.bytes), reportsCanonical);
        });
      }
    });
  }

  describe("the fast decoders alone: each accepts every readable case and doubts the rest", () => {
    for (const entry of decoderCases) {
      it(`A6 A14 ${entry.name}`, () => {
        expect(decodeQuicklyOrDoubt(entry.bytes) !== undefined, "quick").toBe(entry.expect.ok);
        for (const sizes of [[entry.bytes.length], ...CHUNKINGS]) {
          const read = feedInChunks(entry.bytes, sizes);
          expect(read !== undefined, `element-wise in chunks of ${sizes.join(",")}`).toBe(
            entry.expect.ok,
          );
        }
      });
    }
  });
});

/** JSON text that keeps key order and tells Maps, -0 and undefined apart. */
function ordered(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof Map) return { map: [...(inner as Map<unknown, unknown>)] };
    if (Object.is(inner, -0)) return "-0";
    if (inner === undefined) return "undefined";
    return inner;
  });
}

const byZod: ConversationValidator = (value) => {
  const result = conversationSchema.safeParse(value);
  return result.success ? result.data : undefined;
};
const validators: readonly (readonly [string, ConversationValidator])[] = [
  ["the zod schema", byZod],
  ["validateConversation (by hand)", validateConversation],
];

const decodedWithMaps = decodeWholeFile(
  readFileSync(new URL("../../../../test/fixtures/format-1/valid/proto-ids.json", import.meta.url)),
);
const cases = [
  ...validatorCases,
  {
    name: "a decoded conversation, its id maps as Maps",
    value: decodedWithMaps.ok ? decodedWithMaps.conversation : undefined,
    valid: true,
  },
];

describe("format 1's validators, one case table", () => {
  for (const [name, validate] of validators) {
    describe(name, () => {
      for (const entry of cases) {
        it(`A6 A14 ${entry.name}`, () => {
          const output = validate(entry.value);
          expect(output !== undefined).toBe(entry.valid);
          // The same output as the schema's: values, key order, Maps.
          if (output !== undefined) expect(ordered(output)).toBe(ordered(byZod(entry.value)));
        });
      }
    });
  }
});
