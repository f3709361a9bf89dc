import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isBlockList } from "./block-check.js";
import { blockSchema } from "./schema.js";

const blockList = z.array(blockSchema);

/** Values near the block shapes: every key of every block type, right and wrong values. */
const anyValue = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "a".repeat(64),
    "0f".repeat(32),
    "image/png",
    "image/svg+xml",
    "QUJD",
    "QUI=",
    "Q",
  ),
  fc.boolean(),
  fc.integer(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);
const KEYS = [
  "type",
  "text",
  "sha256",
  "mimeType",
  "id",
  "name",
  "arguments",
  "argumentsBase64",
  "callID",
  "toolName",
  "isError",
  "content",
  "contentBase64",
  "extra",
  "__proto__",
];
const nearBlock = fc
  .tuple(
    fc.constantFrom("text", "image", "imageOmitted", "toolCall", "toolResult", "other"),
    fc.dictionary(fc.constantFrom(...KEYS), anyValue, { maxKeys: 6 }),
  )
  .map(([type, rest]) => JSON.parse(JSON.stringify({ type, ...rest })) as unknown);
const validBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.string() }),
  fc.record({
    type: fc.constant("image"),
    sha256: fc.constant("ab".repeat(32)),
    mimeType: fc.constantFrom("image/png", "image/jpeg"),
  }),
  fc.record({ type: fc.constant("imageOmitted"), mimeType: fc.constant("image/webp") }),
  fc.record({
    type: fc.constant("toolCall"),
    id: fc.string(),
    name: fc.string(),
    arguments: fc.string(),
  }),
  fc.record({
    type: fc.constant("toolCall"),
    id: fc.string(),
    name: fc.string(),
    argumentsBase64: fc.constant("AAEC"),
  }),
  fc.record({
    type: fc.constant("toolResult"),
    callID: fc.string(),
    toolName: fc.string(),
    isError: fc.boolean(),
    content: fc.string(),
  }),
  fc.record({
    type: fc.constant("toolResult"),
    callID: fc.string(),
    toolName: fc.string(),
    isError: fc.boolean(),
    contentBase64: fc.constant("/w=="),
  }),
);

describe("isBlockList", () => {
  it("B3 accepts only what the block schema accepts, and the schema returns it unchanged", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(nearBlock, validBlock), { maxLength: 4 }), (generated) => {
        // As read back from storage: parsed JSON.
        const value = JSON.parse(JSON.stringify(generated)) as unknown;
        if (!isBlockList(value)) return;
        const parsed = blockList.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toStrictEqual(value);
      }),
      { numRuns: 5000 },
    );
  });

  it("B3 accepts every valid block list (the fast path is taken)", () => {
    fc.assert(
      fc.property(fc.array(validBlock, { maxLength: 5 }), (value) => {
        const copy = JSON.parse(JSON.stringify(value)) as unknown;
        expect(blockList.safeParse(copy).success).toBe(true);
        expect(isBlockList(copy)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("B3 refuses what the schema refuses: unknown keys, two payloads, wrong types", () => {
    const refused: unknown[] = [
      {},
      [{ type: "text", text: "a", extra: 1 }],
      [{ type: "text", text: 1 }],
      [{ type: "toolCall", id: "c", name: "n", arguments: "{}", argumentsBase64: "AA==" }],
      [{ type: "toolCall", id: "c", name: "n" }],
      [{ type: "toolResult", callID: "c", toolName: "t", isError: "no", content: "x" }],
      [{ type: "toolResult", callID: "c", toolName: "t", isError: false, contentBase64: "!" }],
      [{ type: "image", sha256: "AB".repeat(32), mimeType: "image/png" }],
      [{ type: "imageOmitted", mimeType: "PNG" }],
      [JSON.parse('{"type":"text","text":"a","__proto__":{}}')],
      [null],
    ];
    for (const value of refused) {
      expect(isBlockList(value)).toBe(false);
      expect(blockList.safeParse(value).success).toBe(false);
    }
  });
});
