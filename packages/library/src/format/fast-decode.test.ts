import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeParseStrictJson } from "../core/strict-json.js";
import { checkedJsonParse } from "./fast-decode.js";
import { NEED_MORE, newValueEnd, valueEnd } from "./json-bytes.js";

/**
 * The checked JSON.parse of the element-wise decoder against the strict parser it stands in for.
 * Repeated keys (wherever they are and whatever the strings hold), numbers too large for a float
 * and nesting past the limit are cases of the decoders' table (test/support/decoder-cases.ts,
 * decoders.test.ts).
 */
function checkedParse(text: string) {
  // A line break after the value, as after every value of a file: a number's end is found there.
  const bytes = Buffer.from(`${text}\n`, "utf8");
  const found = newValueEnd();
  valueEnd(bytes, 0, found);
  if (found.end === NEED_MORE) return undefined;
  return checkedJsonParse(text, 0, found.members);
}

describe("the checked JSON.parse of the decoder", () => {
  it("A14 gives what the strict parser gives for JSON without repeated keys", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const fast = checkedParse(text);
        const strict = safeParseStrictJson(text);
        expect(strict.ok).toBe(true);
        expect(fast).toBeDefined();
        expect(JSON.stringify(fast?.value)).toBe(JSON.stringify(strict.ok ? strict.value : null));
      }),
      { numRuns: 300 },
    );
    const tricky = '{"a:b":"c\\"d:e","\\\\":":\\\\","u":"\\u003a"}';
    expect(checkedParse(tricky)?.value).toEqual(JSON.parse(tricky));
  });

  it("A14 doubts every object with a key written twice, which the strict parser refuses", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }),
        fc.nat(),
        (record, pick) => {
          const keys = Object.keys(record);
          const key = keys[pick % keys.length] ?? "";
          const text = `${JSON.stringify(record).slice(0, -1)},${JSON.stringify(key)}:null}`;
          expect(safeParseStrictJson(text).ok).toBe(false);
          expect(checkedParse(text)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
