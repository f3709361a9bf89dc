import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";

// Defect: `verbatim serve` on a port another program holds said "internal error: listen
// EADDRINUSE". It names the port and what to do (port_unavailable), exit 1, and leaves nothing
// running.
describe("serve on a port in use (real child process)", { timeout: 120_000 }, () => {
  let folder: string;
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "verbatim-port-"));
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    rmSync(folder, { recursive: true, force: true });
  });

  it("says which port is in use and what to do, exit 1", async () => {
    for (const extra of [[], ["--upstream", "echo"]]) {
      const run = await runCli([
        "serve",
        "--db",
        join(folder, "verbatim.sqlite"),
        "--port",
        String(port),
        ...extra,
      ]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(
        `verbatim serve: port ${port} on 127.0.0.1 is already in use by another program (EADDRINUSE)`,
      );
      expect(run.stderr).toContain("--port 0 picks a free one");
      expect(run.stderr).not.toContain("internal error");
    }
  });
});
