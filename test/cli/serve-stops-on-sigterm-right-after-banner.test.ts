import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./run-cli.js";
import { startServeChild, withoutProviderKeys } from "./serve-child.js";

// Defect: `verbatim serve` printed its banner before it listened for SIGTERM, so a supervisor
// that stopped it as soon as it read the banner killed it outright (no exit code, no clean
// shutdown). It listens first: every stop is clean, exit 0.
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
        const server = await startServeChild([], env, [join(ROOT, "bin", "start.js")], folder);
        expect(await server.stop(), `round ${round}`).toBe(0);
      }
    });
  },
);
