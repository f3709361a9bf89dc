/**
 * The console page (web/) in real Chromium: built with Vite, served by the server, talking to
 * the console routes over HTTP. Chromium is the system's /usr/bin/chromium driven through
 * playwright-core; the test is skipped with a notice when it is missing.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { freshDatabase, uniqueName, type FreshDatabase } from "../support/databases.js";
import { testServer, TEST_OPERATOR_TOKEN, type TestServer } from "../support/server.js";

// A browser on a busy machine can take seconds to show what the page fetched.
vi.setConfig({ expect: { poll: { timeout: 20_000, interval: 50 } } });

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  process.stderr.write(`\n[notice] ${CHROMIUM} is missing: the console page test is SKIPPED\n\n`);

describe.skipIf(!hasChromium)("console page in Chromium", { timeout: 120_000 }, () => {
  let folder: string;
  let fresh: FreshDatabase;
  let server: TestServer;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "verbatim-web-"));
    await build({
      configFile: new URL("../../web/vite.config.ts", import.meta.url).pathname,
      logLevel: "warn",
      build: { outDir: folder, emptyOutDir: true },
    });
    fresh = await freshDatabase("sqlite");
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(fresh.database);
    const messages = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "What is the weather in Oslo?" }] },
        {
          role: "assistant",
          content: [
            {
              type: "toolCall",
              id: "toolu_01Page",
              name: "get_weather",
              arguments: '{"city":"Oslo"}',
            },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "toolResult",
              callID: "toolu_01Page",
              toolName: "get_weather",
              isError: false,
              content: "sunny",
            },
          ],
        },
        { role: "assistant", content: [{ type: "text", text: "It is sunny in Oslo." }] },
      ],
    });
    const jobs = new BackgroundAgentJobs(fresh.database);
    const job = await jobs.createJob(subject, {
      conversationId: messages[0]?.conversationId ?? "",
      retryBudget: 0,
    });
    await jobs.startAttempt(subject, job.id);
    await jobs.startTurn(subject, job.id, [
      { item_key: "client:1", item: { type: "user_message", text: "Summarise the forecast" } },
      { item_key: "agent:1", item: { type: "agent_message", text: "The forecast is sunny." } },
    ]);
    server = await testServer(fresh.database, { webRoot: folder });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.app.close();
    await fresh?.cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  it("B14 lists conversations and jobs and shows messages and trajectories in the three views", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    await page.goto(`${url}/#token=${encodeURIComponent(TEST_OPERATOR_TOKEN)}`);
    expect(page.url()).toBe(`${url}/`);

    await page.locator("#list li[data-id]").first().click();
    await expect.poll(() => page.locator("#content .message").count()).toBe(4);
    expect(await page.locator("#content").innerText()).toContain("toolu_01Page");

    await page.locator('input[name="view"][value="model-visible"]').check();
    await expect.poll(() => page.locator("#content").innerText()).toContain("call_1");
    const visible = await page.locator("#content").innerText();
    expect(visible).not.toContain("toolu_01Page");
    expect(visible).toContain("It is sunny in Oslo.");
    await page.screenshot({ path: join(process.cwd(), "tmp", "console-conversation.png") });

    await page.locator("#tab-jobs").click();
    await page.locator("#list li[data-id]").first().click();
    await expect.poll(() => page.locator("#content .turn").count()).toBe(1);
    await page.locator('input[name="view"][value="chatml"]').check();
    await expect
      .poll(() => page.locator("#content").innerText())
      .toContain("The forecast is sunny.");
    await page.screenshot({ path: join(process.cwd(), "tmp", "console-job.png") });

    // The page talks to the console routes over HTTP only, and the token never goes in a URL.
    expect(requests.some((one) => one.includes("/ai-gateway/conversations"))).toBe(true);
    expect(requests.some((one) => one.includes(TEST_OPERATOR_TOKEN))).toBe(false);
  });

  it("B14 without a valid token the page shows the error and lists nothing", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/#token=wrong`);
    await expect.poll(() => page.locator("#status").innerText()).toContain("unauthorized");
    expect(await page.locator("#list li[data-id]").count()).toBe(0);
  });
});
