import { describe, expect, it } from "vitest";
import { cutAtCodePoint, storableText, storableBlocks } from "./repair.js";

describe("repairing what an upstream sends", () => {
  it("replaces lone surrogates (high, low, at either end) with U+FFFD and keeps pairs", () => {
    expect(storableText("a\ud800b\udc00c")).toBe("a\ufffdb\ufffdc");
    expect(storableText("\udfff😀\ud83d")).toBe("\ufffd😀\ufffd");
    expect(storableText("plain")).toBe("plain");
    expect(storableText("nul\u0000here")).toBe("nul\ufffdhere");
  });

  it("cuts at a code point boundary, never between the halves of a pair", () => {
    expect(cutAtCodePoint("ab😀", 3)).toBe("ab");
    expect(cutAtCodePoint("ab😀", 4)).toBe("ab😀");
    expect(cutAtCodePoint("abc", 2)).toBe("ab");
    expect(cutAtCodePoint("a\ud800bc", 3)).toBe("a\ufffdb");
  });

  it("repairs every string of a block, leaving other values as they are", () => {
    expect(
      storableBlocks([
        { type: "text", text: "x\ud800" },
        { type: "toolCall", id: "call\udc00", name: "f", arguments: "{}" },
      ]),
    ).toEqual([
      { type: "text", text: "x\ufffd" },
      { type: "toolCall", id: "call\ufffd", name: "f", arguments: "{}" },
    ]);
  });
});
