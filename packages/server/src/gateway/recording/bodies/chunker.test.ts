import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chunkEnds, MAX_CHUNK, MIN_CHUNK } from "./chunker.js";

describe("content-defined chunks (issue 33)", () => {
  it("cuts within the bounds, and the same run cuts the same wherever it moves", () => {
    const block = randomBytes(200_000);
    const ends = chunkEnds(block);
    let start = 0;
    for (const end of ends.slice(0, -1)) {
      expect(end - start).toBeGreaterThanOrEqual(MIN_CHUNK);
      expect(end - start).toBeLessThanOrEqual(MAX_CHUNK);
      start = end;
    }
    expect(ends.at(-1)).toBe(block.length);
    // Behind 1,000 other bytes the cuts come back in step after the first chunk or two.
    const moved = chunkEnds(Buffer.concat([randomBytes(1000), block])).map((end) => end - 1000);
    const shared = ends.filter((end) => moved.includes(end));
    expect(shared.length).toBeGreaterThan(ends.length - 3);
  });

  it("keeps a short region whole", () => {
    expect(chunkEnds(randomBytes(MIN_CHUNK))).toEqual([MIN_CHUNK]);
    expect(chunkEnds(Buffer.alloc(0))).toEqual([]);
  });
});
