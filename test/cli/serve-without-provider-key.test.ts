import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";
import { startServeChild, withoutProviderKeys } from "./serve-child.js";

// `verbatim serve` without any provider key (and without --upstream echo) says on start that
// /v1/responses cannot answer, and how to change that.
describe("serve without a provider key (real child process)", { timeout: 120_000 }, () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), "verbatim-nokey-"));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("names the missing key and the echo in its banner; a response is 503 upstream_not_configured", async () => {
    const db = join(folder, "verbatim.sqlite");
    const env = withoutProviderKeys(process.env);
    const server = await startServeChild(["--db", db], env);
    try {
      expect(server.stdout()).toContain("upstream: none: no provider API key is set");
      expect(server.stdout()).toContain("--upstream echo");
      const created = await runCli(["keys", "create", "--db", db, "--subject", "s", "--json"], {
        env,
      });
      const key = (JSON.parse(created.stdout) as { key: string }).key;
      const reply = await fetch(`${server.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-sonnet-4-5", input: "hello" }),
      });
      expect(reply.status).toBe(503);
      expect(((await reply.json()) as { error: { code: string } }).error.code).toBe(
        "upstream_not_configured",
      );
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
