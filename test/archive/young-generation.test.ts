import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const CHILD = "test/archive/young-generation-child.ts";

async function afterReading(
  mode: "large" | "small" | "serve" | "none",
): Promise<{ applied: boolean; newSpaceBytes: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ["bin/run-ts.js", CHILD, mode], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as { applied: boolean; newSpaceBytes: number };
}

// Issue 15 (peak memory of open + save): the `verbatim` command keeps V8's young generation at
// its starting size, set at run time, when it reads a large conversation; this also holds this
// Node.js to that setting having its effect.
describe("the verbatim command's young generation (issue 15)", () => {
  it("stays at its starting size for a large conversation; grows otherwise and for serve", async () => {
    const [large, small, serve, none] = await Promise.all([
      afterReading("large"),
      afterReading("small"),
      afterReading("serve"),
      afterReading("none"),
    ]);
    expect(large.applied).toBe(true);
    expect(large.newSpaceBytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(small.applied).toBe(false);
    expect(serve.applied).toBe(false);
    for (const grown of [small, serve, none]) {
      expect(grown.newSpaceBytes).toBeGreaterThanOrEqual(32 * 1024 * 1024);
    }
  }, 60_000);
});
