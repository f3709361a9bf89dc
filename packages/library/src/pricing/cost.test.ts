import { describe, expect, it } from "vitest";
import {
  accumulateCost,
  addUsage,
  contextWindow,
  imagePrice,
  requestCost,
  tokenPrice,
  totalCost,
  totalInput,
} from "./cost.js";
import { matchRow } from "./tables.js";
import type { Cost, Usage } from "./types.js";

const usage = (fields: Partial<Usage>): Usage => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  webSearchRequests: 0,
  ...fields,
});

describe("pricing", () => {
  it("A8 prices a request from the genai-prices table: input excludes cache reads and writes", () => {
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write (5m) per MTok.
    const dollars = tokenPrice(
      "anthropic",
      "claude-sonnet-4-5",
      usage({ input: 100_000, output: 10_000, cacheRead: 50_000, cacheWrite: 10_000 }),
    );
    expect(dollars).toBeCloseTo(0.3 + 0.15 + 0.015 + 0.0375, 9); // below the 200k-token tier
    const oneHour = tokenPrice(
      "anthropic",
      "claude-sonnet-4-5",
      usage({ cacheWrite: 100_000, cacheWrite1h: 100_000 }),
    );
    expect(oneHour).toBeCloseTo(0.6, 6);
    expect(tokenPrice("openai-chat", "gpt-5", usage({ input: 1_000_000 }))).toBeCloseTo(1.25, 6);
    expect(tokenPrice("gemini", "gemini-2.5-pro", usage({ output: 1_000_000 }))).toBeCloseTo(10, 6);
    expect(tokenPrice("anthropic", "no-such-model", usage({ input: 1 }))).toBeUndefined();
  });

  it("A8 request cost kinds: reported (OpenRouter), estimated, unknown; generated images priced when known", () => {
    expect(
      requestCost({
        provider: "openrouter",
        model: "x",
        usage: usage({ input: 10, reportedCost: 0.25 }),
      }),
    ).toEqual({ kind: "reported", dollars: 0.25 });
    expect(
      requestCost({ provider: "anthropic", model: "no-such-model", usage: usage({ input: 10 }) }),
    ).toEqual({ kind: "unknown" });
    const plain = requestCost({
      provider: "openai-responses",
      model: "gpt-5",
      usage: usage({ input: 1_000_000 }),
    });
    const withImages = requestCost({
      provider: "openai-responses",
      model: "gpt-5",
      usage: usage({ input: 1_000_000 }),
      generatedImages: { count: 2, model: "gpt-image-1" },
    });
    expect(plain).toEqual({ kind: "estimated", dollars: 1.25 });
    expect(withImages.kind === "estimated" && withImages.dollars).toBeCloseTo(1.25 + 2 * 0.042, 9);
    expect(imagePrice("gemini", "gemini-2.5-flash-image-preview")).toBe(0.039);
    expect(imagePrice("openai-chat", "gpt-image-1-mini")).toBe(0.011);
  });

  it("A8 accumulates per-request costs into the conversation's cost", () => {
    const reported: Cost = { kind: "reported", dollars: 1 };
    const estimated: Cost = { kind: "estimated", dollars: 2 };
    expect(accumulateCost(undefined, reported)).toEqual(reported);
    expect(accumulateCost(reported, reported)).toEqual({ kind: "reported", dollars: 2 });
    expect(accumulateCost(reported, estimated)).toEqual({
      kind: "estimated",
      dollars: 3,
      partial: true,
    });
    expect(accumulateCost(estimated, reported)).toEqual({
      kind: "estimated",
      dollars: 3,
      partial: true,
    });
    expect(accumulateCost(estimated, estimated)).toEqual({ kind: "estimated", dollars: 4 });
    expect(accumulateCost({ kind: "estimated", dollars: 1, partial: true }, estimated)).toEqual({
      kind: "estimated",
      dollars: 3,
      partial: true,
    });
    expect(accumulateCost(estimated, { kind: "unknown" })).toEqual({ kind: "unknown" });
    expect(accumulateCost({ kind: "unknown" }, estimated)).toEqual({ kind: "unknown" });
    expect(accumulateCost({ kind: "notBilled" }, { kind: "notBilled" })).toEqual({
      kind: "notBilled",
    });
    expect(accumulateCost({ kind: "notBilled" }, reported)).toEqual(reported);
    expect(accumulateCost(estimated, { kind: "notBilled" })).toEqual(estimated);
    expect(totalCost([])).toEqual({ kind: "unknown" });
    expect(totalCost([reported, reported, estimated])).toEqual({
      kind: "estimated",
      dollars: 4,
      partial: true,
    });
  });

  it("A7 adds usages; the optional keys appear only when one side has them", () => {
    expect(addUsage(usage({ input: 1 }), usage({ output: 2 }))).toEqual(
      usage({ input: 1, output: 2 }),
    );
    expect(addUsage(usage({ cacheWrite1h: 3 }), usage({ reportedCost: 0.5 }))).toEqual(
      usage({ cacheWrite1h: 3, reportedCost: 0.5 }),
    );
    expect(totalInput(usage({ input: 1, cacheRead: 2, cacheWrite: 3 }))).toBe(6);
  });

  it("A18 context windows: bundled table first (longest prefix), then the price package", () => {
    expect(contextWindow("anthropic", "claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindow("openrouter", "openai/gpt-4.1-mini")).toBe(1_047_576);
    expect(contextWindow("gemini", "gemini-2.5-flash")).toBe(1_048_576);
    expect(contextWindow("openai-chat", "no-such-model")).toBeUndefined();
    const rows = [
      { provider: "*", modelPrefix: "a", size: 1 },
      { provider: "*", modelPrefix: "ab", size: 2 },
      { provider: "p", modelPrefix: "ab", size: 3 },
    ];
    expect(matchRow(rows, "p", "abc")?.size).toBe(3);
    expect(matchRow(rows, "q", "abc")?.size).toBe(2);
    expect(matchRow(rows, "q", "x/ax")?.size).toBe(1);
  });
});
