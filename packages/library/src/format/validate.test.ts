import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { conversationSchema } from "./conversation-schema.js";
import { decodeConversation, decodeWholeFile } from "./decode.js";
import { emptyConversation } from "./empty.js";
import { encodeConversation } from "./encode.js";
import {
  QUICK_DECODE_MAX_BYTES,
  decodeConversationQuickly,
  decodeQuicklyOrDoubt,
} from "./quick-decode.js";
import { validateConversation } from "./validate.js";

/**
 * The hand-written check of format 1 (validate.ts) against the zod schema that defines the
 * format, on generated and mutated conversations: the same verdict on every value, the same
 * output (values, key order, Maps), and, for the element-wise and quick decoders that check with
 * it, the same result as the whole-file decoder that checks with zod (the same reason, kind,
 * path and message for an unreadable file). The case lists are in the one table of
 * test/support/decoder-cases.ts (decoders.test.ts).
 */

/** JSON text that keeps key order and tells Maps, -0 and undefined apart. */
function ordered(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof Map) return { map: [...(inner as Map<unknown, unknown>)] };
    if (Object.is(inner, -0)) return "-0";
    if (inner === undefined) return "undefined";
    return inner;
  });
}

/** Both agree on the value: valid for both (with equal outputs) or invalid for both. */
function expectSameVerdict(value: unknown): boolean {
  const zod = conversationSchema.safeParse(value);
  const hand = validateConversation(value);
  expect(hand !== undefined, zod.success ? "zod accepts" : ordered(zod.error.issues[0])).toBe(
    zod.success,
  );
  if (zod.success) {
    expect(hand).toStrictEqual(zod.data);
    expect(ordered(hand)).toBe(ordered(zod.data));
  }
  return zod.success;
}

/** The element-wise and quick decoders (hand-written check) agree with the whole-file one (zod). */
function expectSameDecoding(bytes: Uint8Array): void {
  const whole = decodeWholeFile(bytes);
  for (const decoded of [decodeConversation(bytes), decodeQuicklyOrDoubt(bytes) ?? whole]) {
    // The whole-file decoder does not look at the layout.
    const result = decoded.ok ? { ok: true, conversation: decoded.conversation } : decoded;
    expect(result).toStrictEqual(whole);
    expect(ordered(result)).toBe(ordered(whole));
  }
}

// --- mutations of a valid conversation's JSON value, one at a random place -----------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every place in a JSON value: the path of each object, array and leaf. */
function places(value: Json, path: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(path);
  if (Array.isArray(value)) value.forEach((inner, index) => places(inner, [...path, index], out));
  else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) places(value[key] as Json, [...path, key], out);
  }
  return out;
}

const replacements: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  "",
  "x",
  "text",
  "image",
  "toolCall",
  "user",
  "estimated",
  "A".repeat(64),
  "a".repeat(64),
  "image/png",
  "Zm9v",
  "Zm9",
  [],
  {},
  { type: "text", text: "" },
  { state: "pending" },
  [{ type: "text", text: "" }],
];
const extraKeys = ["__proto__", "constructor", "type", "extra", "text", "content", "images"];

type Mutation =
  | { kind: "replace"; with: Json }
  | { kind: "delete" }
  | { kind: "addKey"; key: string; with: Json }
  | { kind: "shuffle"; seed: number };

const anyMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("replace" as const), with: fc.constantFrom(...replacements) }),
  fc.record({ kind: fc.constant("delete" as const) }),
  fc.record({
    kind: fc.constant("addKey" as const),
    key: fc.constantFrom(...extraKeys),
    with: fc.constantFrom(...replacements),
  }),
  fc.record({ kind: fc.constant("shuffle" as const), seed: fc.nat() }),
);

/** The JSON text of `value` with `mutation` applied at `path` (text, so that `__proto__` is a key). */
function mutatedText(value: Json, path: readonly (string | number)[], mutation: Mutation): string {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  const parentPath = path.slice(0, -1);
  const last = path.at(-1);
  let parent: Json = copy;
  for (const segment of parentPath) parent = (parent as Record<string, Json>)[segment] as Json;
  const target = last === undefined ? copy : (parent as Record<string, Json>)[last];
  const marker = "\u0000mutation\u0000";
  switch (mutation.kind) {
    case "replace":
      if (last === undefined) return JSON.stringify(mutation.with);
      (parent as Record<string, Json>)[last] = mutation.with;
      return JSON.stringify(copy);
    case "delete":
      if (last === undefined) return "{}";
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete (parent as Record<string, Json>)[last];
      return JSON.stringify(copy);
    case "addKey": {
      if (typeof target !== "object" || target === null || Array.isArray(target)) {
        return JSON.stringify(copy);
      }
      // Written through a marker key so that `__proto__` lands in the text as a plain key.
      (target as Record<string, Json>)[marker] = mutation.with;
      return JSON.stringify(copy).replace(JSON.stringify(marker), () =>
        JSON.stringify(mutation.key),
      );
    }
    case "shuffle": {
      if (typeof target !== "object" || target === null || Array.isArray(target)) {
        return JSON.stringify(copy);
      }
      const entries = Object.entries(target);
      const rotate = entries.length === 0 ? 0 : mutation.seed % entries.length;
      const shuffled = Object.fromEntries([
        ...entries.slice(rotate),
        ...entries.slice(0, rotate),
      ]) as Json;
      if (last === undefined) return JSON.stringify(shuffled);
      (parent as Record<string, Json>)[last] = shuffled;
      return JSON.stringify(copy);
    }
  }
}

const anyMutatedText = anySavedConversation.chain((conversation) => {
  const value = JSON.parse(encodeConversation(conversation).toString("utf8")) as Json;
  const all = places(value);
  return fc
    .tuple(fc.integer({ min: 0, max: all.length - 1 }), anyMutation)
    .map(([index, mutation]) => mutatedText(value, all[index] ?? [], mutation));
});

describe("format 1 checked by hand (validate.ts) against the zod schema", () => {
  it("A6 generated conversations: both accept, with the same values, key order and Maps", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const value: unknown = JSON.parse(encodeConversation(conversation).toString("utf8"));
        expect(expectSameVerdict(value)).toBe(true);
        expect(validateConversation(value)).toEqual(conversation);
      }),
      { numRuns: 300 },
    );
  });

  it("A14 mutated conversations: the same verdict, and the element-wise and quick decoders give the whole-file decoder's result", () => {
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(anyMutatedText, (text) => {
        if (expectSameVerdict(JSON.parse(text))) accepted++;
        else refused++;
        expectSameDecoding(Buffer.from(text, "utf8"));
      }),
      { numRuns: 1500 },
    );
    // Both outcomes were exercised, many times.
    expect(refused).toBeGreaterThan(300);
    expect(accepted).toBeGreaterThan(100);
  });

  it("a file larger than QUICK_DECODE_MAX_BYTES is decoded by decodeConversation, the same", async () => {
    const big = {
      ...JSON.parse(encodeConversation(emptyConversation()).toString()),
      model: "m".repeat(QUICK_DECODE_MAX_BYTES),
    } as Record<string, unknown>;
    const bytes = Buffer.from(JSON.stringify(big));
    expect(decodeQuicklyOrDoubt(bytes)).toBeUndefined();
    const result = await decodeConversationQuickly(bytes);
    expect(result).toStrictEqual(decodeConversation(bytes));
    expect(result.ok && result.conversation.model?.length).toBe(QUICK_DECODE_MAX_BYTES);
  });
});
