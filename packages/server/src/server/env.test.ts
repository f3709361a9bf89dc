import { describe, expect, it } from "vitest";
import { choiceFromEnv, switchFromEnv, wholeNumberFromEnv } from "./env.js";

describe("server settings from the environment", () => {
  it("a whole number: unset or empty is the default; anything but digits stops the start", () => {
    expect(wholeNumberFromEnv({}, "N")).toBeUndefined();
    expect(wholeNumberFromEnv({ N: " " }, "N")).toBeUndefined();
    expect(wholeNumberFromEnv({ N: "0" }, "N")).toBe(0);
    expect(wholeNumberFromEnv({ N: "64" }, "N")).toBe(64);
    for (const text of ["12O", "-1", "1.5", "1e400"]) {
      expect(() => wholeNumberFromEnv({ N: text }, "N")).toThrow(
        `N must be a whole number, not "${text}"`,
      );
    }
  });

  it("a switch: on/off, true/false, 1/0 in any case; anything else stops the start", () => {
    expect(switchFromEnv({}, "S")).toBeUndefined();
    expect(switchFromEnv({ S: "" }, "S")).toBeUndefined();
    for (const on of ["on", "ON", "true", "1", " On "])
      expect(switchFromEnv({ S: on }, "S")).toBe(true);
    for (const off of ["off", "False", "0"]) expect(switchFromEnv({ S: off }, "S")).toBe(false);
    expect(() => switchFromEnv({ S: "yes please" }, "S")).toThrow(
      'S must be on or off, not "yes please"',
    );
  });

  it("a choice: one of the words in any case; anything else stops the start naming the words", () => {
    const modes = ["public", "off", "any"] as const;
    expect(choiceFromEnv({}, "C", modes)).toBeUndefined();
    expect(choiceFromEnv({ C: " " }, "C", modes)).toBeUndefined();
    expect(choiceFromEnv({ C: " Public " }, "C", modes)).toBe("public");
    expect(choiceFromEnv({ C: "ANY" }, "C", modes)).toBe("any");
    expect(() => choiceFromEnv({ C: "pubic" }, "C", modes)).toThrow(
      'C must be one of public, off, any, not "pubic"',
    );
  });
});
