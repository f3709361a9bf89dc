/**
 * `verbatim serve` and the console page (issue 20), with the real command in a child process:
 * on a fresh checkout the page is not built, and the server builds it on start (saying so on
 * stderr) so the link it prints works; where it cannot be built it prints no dead link, says
 * why and how to build it, and `/` answers with a page saying the same.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startServeChild, withoutProviderKeys, type ServeChild } from "./serve-child.js";

describe("verbatim serve without a built console page", { timeout: 180_000 }, () => {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-serve-page-"));
  const running: ServeChild[] = [];
  afterAll(async () => {
    for (const server of running) await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it("B14 builds the page from the checkout's sources on start, says so on stderr, and serves it", async () => {
    const pageFolder = join(folder, "built");
    const server = await startServeChild(["--db", join(folder, "a.sqlite")], {
      ...withoutProviderKeys(process.env),
      VERBATIM_WEB_ROOT: pageFolder,
    });
    running.push(server);
    expect(server.stderr()).toMatch(/the console page is not built: building it .* into .*built/);
    expect(server.stderr()).toMatch(/console page built in \d+\.\d s/);
    const link = /console page: (http:\/\/\S+)\/#token=(\S+)/.exec(server.stdout());
    expect(link?.[1]).toBe(server.url);
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toContain("javascript");
    // The page's addresses answer with it too.
    expect((await fetch(`${server.url}/conversations`)).status).toBe(200);
  });

  it("B14 where the page cannot be built: no dead link, a notice on stderr, and / says how to build it", async () => {
    const server = await startServeChild(["--db", join(folder, "b.sqlite")], {
      ...withoutProviderKeys(process.env),
      VERBATIM_WEB_ROOT: join(folder, "never-built"),
      VERBATIM_WEB_BUILD: "off",
    });
    running.push(server);
    expect(server.stdout()).not.toContain("#token=");
    expect(server.stdout()).toMatch(
      /console page: none \(the console page is not built .*never-built.*; http:\S+\/ says how to build it\)/,
    );
    await expect.poll(() => server.stderr()).toContain("npm run build");
    for (const path of ["/", "/conversations/c_1"]) {
      const answer = await fetch(`${server.url}${path}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get("content-type")).toContain("text/html");
      const text = await answer.text();
      expect(text).toContain("The console page is not built");
      expect(text).toContain("<code>npm run build</code>");
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
