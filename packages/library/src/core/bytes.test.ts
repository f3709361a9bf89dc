import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWellFormedText, scanIsWellFormed } from "./bytes.js";

describe("isWellFormedText", () => {
  it("A11 refuses lone surrogates and accepts pairs, natively and written out alike", () => {
    const cases: [string, boolean][] = [
      ["", true],
      ["plain", true],
      ["😀 paired", true],
      ["\ud83d", false],
      ["\ude00 low first", false],
      ["end \ud83d", false],
      ["\ud83d\ud83d\ude00", false],
    ];
    for (const [text, expected] of cases) {
      expect(isWellFormedText(text)).toBe(expected);
      expect(scanIsWellFormed(text)).toBe(expected);
    }
  });

  it("A11 the native check and the scan agree on any UTF-16 string", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.string({
          unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((code) => String.fromCharCode(code)),
        }),
        (a, b) => {
          const text = a + b;
          expect(isWellFormedText(text)).toBe(scanIsWellFormed(text));
        },
      ),
      { numRuns: 500 },
    );
  });
});
