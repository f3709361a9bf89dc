import { describe, expect, it } from "vitest";
import { applyDiff, decodeManifest, encodeManifest } from "./manifest.js";

describe("recorded body manifests (issue 33)", () => {
  it("round-trips flat and diff manifests, large numbers included", () => {
    const flat = {
      kind: "flat" as const,
      length: 2 ** 40 + 5,
      ranges: [
        { piece: 2 ** 40, offset: 0, length: 2 ** 40 },
        { piece: 7, offset: 3, length: 5 },
      ],
    };
    expect(decodeManifest(encodeManifest(flat))).toEqual(flat);
    const diff = {
      kind: "diff" as const,
      length: 12,
      head: 4,
      tailStart: 6,
      baseLength: 10,
      ranges: [{ piece: 9, offset: 1, length: 4 }],
    };
    expect(decodeManifest(encodeManifest(diff))).toEqual(diff);
  });

  it("applies a diff to its base's ranges", () => {
    const base = [
      { piece: 1, offset: 0, length: 6 },
      { piece: 2, offset: 10, length: 4 },
    ];
    const ranges = applyDiff(base, {
      kind: "diff",
      length: 9,
      head: 3,
      tailStart: 8,
      baseLength: 10,
      ranges: [{ piece: 3, offset: 0, length: 4 }],
    });
    expect(ranges).toEqual([
      { piece: 1, offset: 0, length: 3 },
      { piece: 3, offset: 0, length: 4 },
      { piece: 2, offset: 12, length: 2 },
    ]);
  });

  it("refuses damaged manifests with a clear error", () => {
    const good = encodeManifest({
      kind: "flat",
      length: 5,
      ranges: [{ piece: 1, offset: 0, length: 5 }],
    });
    expect(() => decodeManifest(good.subarray(0, good.length - 1))).toThrow(/ends in the middle/);
    expect(() => decodeManifest(Buffer.concat([good, Buffer.from([0])]))).toThrow(/bytes follow/);
    expect(() => decodeManifest(Buffer.from([2]))).toThrow(/version 2 is not 1/);
    const wrongLength = Buffer.from(good);
    wrongLength[2] = 6;
    expect(() => decodeManifest(wrongLength)).toThrow(/hold 5 bytes, not 6/);
    expect(() =>
      applyDiff([{ piece: 1, offset: 0, length: 3 }], {
        kind: "diff",
        length: 3,
        head: 3,
        tailStart: 4,
        baseLength: 4,
        ranges: [],
      }),
    ).toThrow(/base holds 3 bytes, not the 4/);
  });
});
