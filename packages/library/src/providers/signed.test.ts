import { describe, expect, it } from "vitest";
import { attachSignedMaterial, hasSignedMaterial } from "./signed.js";
import type { SignedMaterial } from "./types.js";

const none: SignedMaterial = {
  provider: "anthropic",
  leading: [],
  blockSignatures: [],
  trailing: [],
  reasoningDetails: [],
};

describe("signed material of the running turn", () => {
  it("A23 only rounds that carried signed material are kept, attached to their message", () => {
    expect(hasSignedMaterial(none)).toBe(false);
    const gemini: SignedMaterial = {
      ...none,
      provider: "gemini",
      blockSignatures: [{ block: 0, signature: "s" }],
    };
    expect(hasSignedMaterial(gemini)).toBe(true);
    const turn = attachSignedMaterial([], 3, none);
    expect(turn).toEqual([]);
    expect(attachSignedMaterial(turn, 5, gemini)).toEqual([{ messageIndex: 5, material: gemini }]);
  });
});
