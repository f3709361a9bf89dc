import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeJsonBytes, safeParseStrictJson } from "../core/strict-json.js";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { conversationSchema } from "./conversation-schema.js";
import { decodeConversation } from "./decode.js";
import { encodeConversation } from "./encode.js";

/**
 * decodeConversation reads files one value at a time through JSON.parse, when that gives the
 * same value as the strict parser (element-decode.ts, fast-decode.ts), and checks them by hand
 * (validate.ts). This differential test mutates generated files where it and the strict parser
 * with the schema could disagree (`__proto__` and `constructor` members, repeated keys,
 * undefined keys) and checks that the decoder accepts exactly what they accept.
 */
function strictOnly(bytes: Uint8Array) {
  const text = decodeJsonBytes(bytes);
  if (!text.ok) return undefined;
  const parsed = safeParseStrictJson(text.text);
  if (!parsed.ok) return undefined;
  const result = conversationSchema.safeParse(parsed.value);
  return result.success ? result.data : undefined;
}

const insertions = [
  '"__proto__" : {},',
  '"__proto__" : {"rating" : "good", "reasons" : []},',
  '"__proto__" : {"state" : "pending"},',
  '"constructor" : {"state" : "saved"},',
  '"__proto__" : "' + "ab".repeat(32) + '",',
  '"toString" : 1,',
  '"formatVersion" : 1,',
];

const MEMBER_LINE = /^ *"(?:[^"\\]|\\.)*" : /;

/** Applies one mutation at an eligible line (an object's opening line, or a member line). */
function mutate(text: string, position: number, mutation: number): string {
  const lines = text.split("\n");
  const inserting = mutation < insertions.length;
  const eligible: number[] = [];
  lines.forEach((line, index) => {
    if (inserting ? line.endsWith("{") : MEMBER_LINE.test(line)) eligible.push(index);
  });
  const at = eligible[position % Math.max(1, eligible.length)];
  if (at === undefined) return text;
  const line = lines[at] ?? "";
  if (inserting) lines.splice(at + 1, 0, insertions[mutation] ?? "");
  // Repeat a member: the same key twice in one object.
  else lines.splice(at, 0, line.endsWith(",") ? line : `${line},`);
  return lines.join("\n");
}

describe("the decoder's fast and strict paths agree", () => {
  it("A6 A14 accepts exactly what the strict parser and the schema accept, with the same value", () => {
    let mutated = 0;
    fc.assert(
      fc.property(
        anySavedConversation,
        fc.nat(),
        fc.nat(insertions.length),
        (conversation, position, mutation) => {
          const original = encodeConversation(conversation).toString("utf8");
          const text = mutate(original, position, mutation);
          if (text !== original) mutated++;
          const bytes = Buffer.from(text, "utf8");
          const expected = strictOnly(bytes);
          const result = decodeConversation(bytes);
          expect(result.ok).toBe(expected !== undefined);
          if (result.ok) expect(result.conversation).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
    expect(mutated).toBeGreaterThan(100);
  });
});
