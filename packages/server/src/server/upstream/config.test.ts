import { describe, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "./config.js";

describe("the upstream configuration read from the environment", () => {
  it("refuses a response lease under 100 ms, naming the variable", () => {
    expect(() => upstreamConfigFromEnv({ VERBATIM_RESPONSE_LEASE_MS: "0" })).toThrow(
      "VERBATIM_RESPONSE_LEASE_MS must be at least 100, not 0",
    );
    expect(upstreamConfigFromEnv({}).responseLeaseMs).toBe(30_000);
  });
});
