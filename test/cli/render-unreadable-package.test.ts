import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";

// Defect: `verbatim render` of a package whose conversation cannot be read rendered an empty
// history (exit 0 with --model) or asked for a model (exit 2). It exits 1 and says why.
describe("render of an unreadable package (real child process)", { timeout: 120_000 }, () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), "verbatim-render-unreadable-"));
    mkdirSync(join(folder, "agent"));
    writeFileSync(join(folder, "agent", "conversation.json"), '{"formatVersion": 2}');
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("exits 1 with the reason on one line and nothing on stdout, with or without --model", async () => {
    for (const extra of [[], ["--model", "claude-sonnet-4-5"]]) {
      const run = await runCli(["render", folder, "--provider", "anthropic", ...extra]);
      expect(run.code, extra.join(" ")).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain("verbatim render: the saved conversation cannot be read");
      expect(run.stderr).toContain("formatVersion");
      expect(run.stderr).toContain(join(folder, "agent", "conversation.json"));
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
