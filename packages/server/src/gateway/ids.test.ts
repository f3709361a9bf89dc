import { describe, expect, it } from "vitest";
import { newId } from "./ids.js";

describe("gateway ids", () => {
  it("B3 an id is the prefix and 26 base32 characters", () => {
    for (let index = 0; index < 1000; index++) {
      expect(newId("msg")).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    }
    expect(newId("conv")).toMatch(/^conv_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it("B3 ids made later sort after earlier ones, so new rows land at the end of id indexes", () => {
    const times = [
      0,
      1,
      31,
      32,
      1_000,
      Date.UTC(2026, 10, 30),
      Date.UTC(2026, 10, 30) + 1,
      2 ** 48 - 1,
    ];
    const ids = times.map((time) => newId("msg", time));
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]?.slice(4, 14)).toBe("0000000000");
  });

  it("B3 ids are unique: 80 random bits after the time", () => {
    const time = Date.UTC(2026, 10, 30);
    const ids = new Set<string>();
    for (let index = 0; index < 50_000; index++) ids.add(newId("msg", time));
    expect(ids.size).toBe(50_000);
  });

  it("B3 ids made one after the other in the same millisecond sort in the order they were made", () => {
    // Calls kept back to back share a created_at; a restarted server places them by (created_at, id).
    const time = Date.UTC(2026, 11, 5);
    for (let round = 0; round < 200; round++) {
      const ids = Array.from({ length: 20 }, () => newId("call", time + round));
      expect([...ids].sort()).toEqual(ids);
    }
  });
});
