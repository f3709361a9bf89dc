/**
 * The console page in real Chromium against a real server: builds web/ with Vite, seeds a
 * SQLite database through the stores, serves both on loopback and launches the system's
 * /usr/bin/chromium through playwright-core (never a downloaded browser).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { build } from "vite";
import { vi } from "vitest";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { freshDatabase, uniqueName, type FreshDatabase } from "../support/databases.js";
import { testServer, TEST_OPERATOR_TOKEN, type TestServer } from "../support/server.js";
import { seedConsole, type Seeded } from "./seed.js";

// A browser on a busy machine (the whole suite runs on 2 cores) can take seconds to show what
// a test waits for: every expect.poll of the browser tests waits up to 20 s, not 1 s.
vi.setConfig({ expect: { poll: { timeout: 20_000, interval: 50 } } });

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
export const SCREENSHOTS = join(process.cwd(), ".verbatim-test", "screenshots");

export interface ConsoleHarness {
  readonly url: string;
  readonly seeded: Seeded;
  readonly browser: Browser;
  readonly server: TestServer;
  readonly database: StoreDatabase;
  /** A new page with the token in the session (never in an address). */
  open(path: string, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function startConsole(): Promise<ConsoleHarness> {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-web-"));
  mkdirSync(SCREENSHOTS, { recursive: true });
  await build({
    configFile: new URL("../../web/vite.config.ts", import.meta.url).pathname,
    logLevel: "warn",
    build: { outDir: folder, emptyOutDir: true },
  });
  let fresh: FreshDatabase | undefined;
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    fresh = await freshDatabase("sqlite");
    const seeded = await seedConsole(fresh.database, uniqueName("subject"));
    server = await testServer(fresh.database, { webRoot: folder });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const openedBrowser = browser;
    const openedServer = server;
    const openedDatabase = fresh;
    return {
      url,
      seeded,
      browser: openedBrowser,
      server: openedServer,
      database: openedDatabase.database,
      async open(path, viewport = { width: 1440, height: 900 }) {
        const page = await openedBrowser.newPage({ viewport });
        await page.addInitScript(
          (token) => sessionStorage.setItem("verbatim.operatorToken", token),
          TEST_OPERATOR_TOKEN,
        );
        await page.goto(`${url}${path}`);
        return page;
      },
      async close() {
        await openedBrowser.close();
        await openedServer.app.close();
        await openedDatabase.cleanup();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await browser?.close();
    await server?.app.close();
    await fresh?.cleanup();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}
