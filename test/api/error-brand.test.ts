import { describe, expect, it } from "vitest";
import { VerbatimError, isVerbatimError } from "../../packages/library/src/core/index.js";

/** A second copy of the error module, as a duplicate install would load it. */
async function secondCopy(): Promise<typeof import("../../packages/library/src/core/errors.js")> {
  const url = new URL("../../packages/library/src/core/errors.ts?second-copy", import.meta.url)
    .href;
  return (await import(
    /* @vite-ignore */ url
  )) as typeof import("../../packages/library/src/core/errors.js");
}

describe("errors recognisable across duplicate installs", () => {
  it("a second copy of the module is another class (the premise of the test)", async () => {
    const copy = await secondCopy();
    expect(copy.VerbatimError).not.toBe(VerbatimError);
  });

  it("instanceof and isVerbatimError agree on errors of either copy", async () => {
    const copy = await secondCopy();
    const ours = new VerbatimError("invalid_argument", "ours");
    const theirs = new copy.VerbatimError("invalid_argument", "theirs");
    for (const error of [ours, theirs]) {
      expect(error instanceof VerbatimError).toBe(true);
      expect(error instanceof copy.VerbatimError).toBe(true);
      expect(isVerbatimError(error)).toBe(true);
      expect(copy.isVerbatimError(error)).toBe(true);
      expect(error instanceof Error).toBe(true);
    }
    expect(theirs.code).toBe("invalid_argument");
    expect(theirs.describe()).toBe("theirs");
  });

  it("anything else is not a VerbatimError, whatever it looks like", async () => {
    const copy = await secondCopy();
    const lookalike = Object.assign(new Error("x"), {
      name: "VerbatimError",
      code: "internal_error",
    });
    for (const value of [lookalike, new Error("x"), null, undefined, "VerbatimError", {}]) {
      expect(isVerbatimError(value)).toBe(false);
      expect(copy.isVerbatimError(value)).toBe(false);
      expect(value instanceof VerbatimError).toBe(false);
    }
  });

  it("a subclass keeps the ordinary instanceof", () => {
    class SubError extends VerbatimError {}
    expect(new SubError("internal_error", "x") instanceof SubError).toBe(true);
    expect(new VerbatimError("internal_error", "x") instanceof SubError).toBe(false);
    expect(new SubError("internal_error", "x") instanceof VerbatimError).toBe(true);
  });
});
