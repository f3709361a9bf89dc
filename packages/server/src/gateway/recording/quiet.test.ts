import { describe, expect, it } from "vitest";
import { QuietGate } from "./quiet.js";

// Issue 18 (/v1/messages overhead): placing a recorded call waits while calls are read or
// answered, and never longer than its bound after the keep.
describe("QuietGate", () => {
  it("waits while a call is busy and opens once it has been quiet for quietMs", async () => {
    const gate = new QuietGate(5, 10_000);
    const done = gate.busy();
    let opened = false;
    const waiting = gate.quiet(performance.now()).then(() => {
      opened = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(opened).toBe(false);
    const freed = performance.now();
    done();
    done(); // a second call changes nothing
    await waiting;
    expect(performance.now() - freed).toBeGreaterThanOrEqual(4);
  });

  it("opens maxDelayMs after `since` under calls that never pause", async () => {
    const gate = new QuietGate(5, 40);
    const done = gate.busy();
    const since = performance.now();
    await gate.quiet(since);
    const waited = performance.now() - since;
    done();
    expect(waited).toBeGreaterThanOrEqual(39);
    expect(waited).toBeLessThan(1000);
  });

  it("opens at once when no call was ever busy", async () => {
    const gate = new QuietGate(5, 10_000);
    const since = performance.now();
    await gate.quiet(since);
    expect(performance.now() - since).toBeLessThan(100);
  });
});
