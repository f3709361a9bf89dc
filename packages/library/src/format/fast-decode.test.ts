import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeParseStrictJson } from "../core/strict-json.js";
import { fastParseJson } from "./fast-decode.js";

describe("the fast JSON path of the decoder", () => {
  it("A14 sends a repeated key to the strict path, wherever it is and whatever the strings hold", () => {
    for (const text of [
      '{"a":1,"a":2}',
      '{"x":[{"k":"va:l\\":ue","k":"b"}]}',
      '{"__proto__":1,"__proto__":2}',
      '{"s":"\\u003a","s":1}',
      '{"a\\\\":":","a\\\\":2}',
    ]) {
      expect(fastParseJson(text), text).toBeUndefined();
    }
  });

  it("A14 sends numbers too large for a float and nesting past the limit to the strict path", () => {
    expect(fastParseJson('{"n":1e400}')).toBeUndefined();
    expect(fastParseJson("[".repeat(1001) + "]".repeat(1001))).toBeUndefined();
  });

  it("gives what the strict parser gives for JSON without repeated keys", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const fast = fastParseJson(text);
        const strict = safeParseStrictJson(text);
        expect(strict.ok).toBe(true);
        expect(fast).toBeDefined();
        expect(JSON.stringify(fast?.value)).toBe(JSON.stringify(strict.ok ? strict.value : null));
      }),
      { numRuns: 300 },
    );
    const tricky = '{"a:b":"c\\"d:e","\\\\":":\\\\","u":"\\u003a"}';
    expect(fastParseJson(tricky)?.value).toEqual(JSON.parse(tricky));
  });
});
