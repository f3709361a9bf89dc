import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "./run-cli.js";
import { startServeChild, withoutProviderKeys } from "./serve-child.js";

const START = join(ROOT, "bin", "start.js");

// `npm start` (node bin/start.js) on a machine without provider keys answers with the echo
// upstream and says so; with a key it does not.
describe(
  "npm start picks the echo upstream when no provider key is set (real child process)",
  { timeout: 180_000 },
  () => {
    let folder: string;
    beforeAll(() => {
      folder = mkdtempSync(join(tmpdir(), "verbatim-start-"));
    });
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it("without a key: says so, and a response is answered by the echo", async () => {
      const env = { ...withoutProviderKeys(process.env), VERBATIM_OPERATOR_TOKEN: "vop_start" };
      const server = await startServeChild([], env, [START], folder);
      try {
        expect(server.stdout()).toMatch(/^npm start: no provider API key is set .*echo/m);
        expect(server.stdout()).toContain("upstream: echo");
        const created = await runCli(
          ["keys", "create", "--db", "./.verbatim/verbatim.sqlite", "--subject", "s", "--json"],
          { cwd: folder, env },
        );
        const key = (JSON.parse(created.stdout) as { key: string }).key;
        const reply = await fetch(`${server.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "claude-sonnet-4-5", input: "offline hello" }),
        });
        expect(reply.status).toBe(200);
        const body = (await reply.json()) as { output: { content: { text: string }[] }[] };
        expect(body.output[0]?.content[0]?.text).toBe("offline hello");
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });

    it("with a provider key: no echo", async () => {
      const env = { ...withoutProviderKeys(process.env), ANTHROPIC_API_KEY: "sk-ant-unused" };
      const server = await startServeChild([], env, [START], folder);
      try {
        expect(server.stdout()).not.toContain("echo");
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });
  },
);

// Defect: `verbatim serve` printed its banner before it listened for SIGTERM, so a supervisor
// that stopped it as soon as it read the banner killed it outright (no exit code, no clean
// shutdown). It listens first: every stop is clean, exit 0. (In this file so that no two
// `npm start` build the console page at once.)
describe(
  "serve stops cleanly on a SIGTERM sent the moment the banner is out",
  { timeout: 180_000 },
  () => {
    let folder: string;
    beforeAll(() => {
      folder = mkdtempSync(join(tmpdir(), "verbatim-sigterm-"));
    });
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it("exits 0 every time (npm start, five rounds)", async () => {
      const env = withoutProviderKeys(process.env);
      for (let round = 0; round < 5; round++) {
        const server = await startServeChild([], env, [START], folder);
        expect(await server.stop(), `round ${round}`).toBe(0);
      }
    });
  },
);
