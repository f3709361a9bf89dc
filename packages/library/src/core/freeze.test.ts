import { describe, expect, it } from "vitest";
import { deepFreeze } from "./freeze.js";

describe("deepFreeze", () => {
  it("freezes objects and arrays all the way down and returns the same value", () => {
    const value = { role: "user", content: [{ type: "text", text: "a" }], nested: { list: [1] } };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.content)).toBe(true);
    expect(Object.isFrozen(value.content[0])).toBe(true);
    expect(Object.isFrozen(value.nested.list)).toBe(true);
    expect(() => {
      (value.content[0] as { text: string }).text = "b";
    }).toThrow(TypeError);
    expect(() => (value.content as unknown[]).push({})).toThrow(TypeError);
  });

  it("freezes what a map holds, and leaves byte arrays and primitives as they are", () => {
    const entry = { sections: ["a"] };
    const bytes = new Uint8Array([1, 2]);
    const value = { map: new Map([["k", entry]]), bytes };
    deepFreeze(value);
    expect(Object.isFrozen(entry)).toBe(true);
    expect(Object.isFrozen(entry.sections)).toBe(true);
    bytes[0] = 9;
    expect(bytes[0]).toBe(9);
    expect(deepFreeze("text")).toBe("text");
    expect(deepFreeze(null)).toBe(null);
  });

  it("freezes the inside of an object that was frozen only on the outside", () => {
    const inner = { text: "a" };
    const outer = Object.freeze({ inner });
    deepFreeze(outer);
    expect(Object.isFrozen(inner)).toBe(true);
  });
});
