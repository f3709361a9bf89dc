import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWellFormedText, scanIsWellFormed, utf8DecodeLenient } from "./bytes.js";

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

describe("utf8DecodeLenient", () => {
  const reference = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  // Bytes near UTF-8's edges: continuation bytes, lead bytes of every length, overlong and
  // surrogate encodings, bytes that never occur, a byte order mark.
  const edgyByte = fc.oneof(
    fc.integer({ min: 0x80, max: 0xbf }),
    fc.integer({ min: 0xc0, max: 0xff }),
    fc.constantFrom(0xef, 0xbb, 0xbf, 0xed, 0xa0, 0xf4, 0x90, 0xe0, 0x00, 0x41),
    fc.integer({ min: 0, max: 0xff }),
  );

  it("gives TextDecoder's text (U+FFFD per invalid sequence, a BOM kept) for any bytes", () => {
    fc.assert(
      fc.property(fc.array(edgyByte, { maxLength: 24 }), fc.string(), (bytes, text) => {
        const mixed = Uint8Array.from([...new TextEncoder().encode(text), ...bytes]);
        expect(utf8DecodeLenient(mixed)).toBe(reference.decode(mixed));
      }),
      { numRuns: 20_000 },
    );
  });

  it("decodes a view into a larger buffer, not the whole buffer", () => {
    const whole = new TextEncoder().encode("before|\uFEFFmiddle \u00e9\u{1F600}|after");
    const view = whole.subarray(7, whole.length - 6);
    expect(utf8DecodeLenient(view)).toBe("\uFEFFmiddle \u00e9\u{1F600}");
    expect(utf8DecodeLenient(Uint8Array.from([0xe2, 0x82]))).toBe("\uFFFD");
  });
});
