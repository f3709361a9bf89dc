/**
 * The console as a correct client (issue 20): a slow reply never replaces a newer selection,
 * the connection state is the real one (offline while the server cannot be reached, retried,
 * connected again), the place in a conversation is kept when the view changes, and new
 * messages and items appear without a reload.
 */
import type { Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";

describe.skipIf(!hasChromium)("console: a correct client in Chromium", { timeout: 180_000 }, () => {
  let harness: ConsoleHarness;
  beforeAll(async () => {
    harness = await startConsole();
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("B14 a delayed reply for an earlier selection does not replace the newer selection", async () => {
    const { weather, long } = harness.seeded;
    const page = await harness.open("/");
    let delayed = 0;
    await page.route(`**/ai-gateway/conversations/${weather.id}/messages*`, async (route) => {
      delayed += 1;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue().catch(() => undefined);
    });
    await page.locator(`#list li[data-id="${weather.id}"] a`).click();
    await page.locator(`#list li[data-id="${long.id}"] a`).click();
    await expect
      .poll(() => page.locator("#detail-count").innerText())
      .toContain("300 messages shown");
    await page.waitForTimeout(2500);
    expect(delayed).toBeGreaterThan(0);
    expect(await page.locator("#content h2").innerText()).toBe(`Conversation ${long.id}`);
    expect(await page.locator("#content").innerText()).not.toContain("Oslo");
    expect(await page.locator("#list li.selected").getAttribute("data-id")).toBe(long.id);
    expect(page.url()).toBe(`${harness.url}/conversations/${long.id}`);
    await page.close();
  });

  it("B14 a delayed view reply does not replace the view picked after it", async () => {
    const { weather } = harness.seeded;
    const page = await harness.open("/");
    await page.locator(`#list li[data-id="${weather.id}"] a`).click();
    await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
    await page.route("**/messages?*view=model-visible*", async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue().catch(() => undefined);
    });
    await page.locator('input[name="view"][value="model-visible"]').check();
    await page.locator('input[name="view"][value="chatml"]').check();
    await expect
      .poll(() => page.locator("#detail-count").innerText())
      .toContain("chatml messages shown");
    await page.waitForTimeout(2500);
    expect(await page.locator('input[name="view"]:checked').getAttribute("value")).toBe("chatml");
    expect(await page.locator("#detail-count").innerText()).toContain("chatml messages shown");
    expect(await page.locator("#content").innerText()).toContain("toolu_01Page");
    await page.close();
  });

  it("B14 the connection shows offline while the server cannot be reached, retries, and shows connected again", async () => {
    const page = await harness.open("/");
    await expect.poll(() => page.locator("#status").innerText()).toBe("connected");
    const refuse = (route: Route) => route.abort("connectionrefused");
    await page.route("**/background-agent-jobs*", refuse);
    await page.route("**/healthz", refuse);
    await page.locator("#tab-jobs").click();
    await expect.poll(() => page.locator("#status").innerText()).toMatch(/offline/);
    await page.unroute("**/background-agent-jobs*");
    await page.unroute("**/healthz");
    await page.locator("#retry").click();
    await expect.poll(() => page.locator("#status").innerText()).toBe("connected");
    await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(0);
    await page.close();
  });

  it("B14 the place in the conversation is kept when the view changes", async () => {
    const { long } = harness.seeded;
    const page = await harness.open("/");
    await page.locator(`#list li[data-id="${long.id}"] a`).click();
    await expect
      .poll(() => page.locator("#detail-count").innerText())
      .toContain("300 messages shown");
    const middle = page.locator("#content article.message", {
      hasText: "Message 151 of the long conversation.",
    });
    for (let step = 0; step < 40 && (await middle.count()) === 0; step++) {
      await page.locator("#content").evaluate((node) => node.scrollBy(0, node.clientHeight));
      await page.waitForTimeout(50);
    }
    await middle.evaluate((node) => node.scrollIntoView({ block: "start" }));
    await page.locator('input[name="view"][value="chatml"]').check();
    await expect
      .poll(() => page.locator("#detail-count").innerText())
      .toContain("chatml messages shown");
    const top = await page.locator("#content").evaluate((scroller) => {
      const limit = scroller.getBoundingClientRect().top;
      const first = Array.from(scroller.querySelectorAll("article.message")).find(
        (node) => node.getBoundingClientRect().bottom > limit + 4,
      );
      return first?.textContent ?? "";
    });
    expect(top).toContain("Message 151 of the long conversation.");
    await page.close();
  });

  it("B14 live: a conversation's new message and a running job's new item appear without a reload", async () => {
    const { weather, job, subject } = harness.seeded;
    const page = await harness.open("/");
    await page.locator(`#list li[data-id="${weather.id}"] a`).click();
    await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
    const store = new GatewayMessageStore(harness.database);
    const [written] = await store.appendMessages(subject, {
      previousMessageId: weather.summary,
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "A message written while the page is open" }],
        },
      ],
    });
    await expect
      .poll(() => page.locator(`article[data-id="${written?.id}"]`).count(), { timeout: 15_000 })
      .toBe(1);
    expect(await page.locator("#detail-count").innerText()).toContain("9 messages shown");

    // The job is followed by held requests (long polling), not by asking every few seconds.
    const jobRequests: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes(`/background-agent-jobs/${job.id}`))
        jobRequests.push(request.url());
    });
    await page.locator("#tab-jobs").click();
    await page.locator(`#list li[data-id="${job.id}"] a`).click();
    await expect.poll(() => page.locator("#content [data-item-key]").count()).toBe(9);
    await expect.poll(() => jobRequests.some((url) => url.includes("wait_for_change="))).toBe(true);
    const asked = jobRequests.length;
    await page.waitForTimeout(4000);
    expect(jobRequests.length).toBe(asked);
    const jobs = new BackgroundAgentJobs(harness.database);
    const { turns } = await jobs.readTrajectory(subject, job.id);
    await jobs.appendItems(subject, turns[0]?.id ?? "", [
      {
        item_key: "agent:live",
        item: { type: "agent_message", text: "An item written while the page is open" },
      },
    ]);
    await expect
      .poll(() => page.locator('#content [data-item-key="agent:live"]').count(), {
        timeout: 15_000,
      })
      .toBe(1);
    // The held request answered with the item, and the next one is held again.
    await expect.poll(() => jobRequests.length).toBe(asked + 1);
    await page.close();
  });
});
