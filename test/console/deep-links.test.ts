/**
 * Every address of the console opens what it names when typed or reloaded (issue 20): the
 * server answers each with the page, and the page opens the list, the conversation, the
 * message, the job or the item, in the view and branch the address names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";

describe.skipIf(!hasChromium)("console: deep links in Chromium", { timeout: 180_000 }, () => {
  let harness: ConsoleHarness;
  beforeAll(async () => {
    harness = await startConsole();
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("B14 /conversations and /jobs open their lists", async () => {
    const { weather, job } = harness.seeded;
    const page = await harness.open("/conversations");
    await expect.poll(() => page.locator(`#list li[data-id="${weather.id}"]`).count()).toBe(1);
    expect(await page.locator("#tab-conversations").getAttribute("aria-current")).toBe("true");
    await page.goto(`${harness.url}/jobs`);
    await expect.poll(() => page.locator(`#list li[data-id="${job.id}"]`).count()).toBe(1);
    expect(await page.locator("#tab-jobs").getAttribute("aria-current")).toBe("true");
    await page.close();
  });

  it("B14 /conversations/:id opens the conversation, selected in the list", async () => {
    const { weather } = harness.seeded;
    const page = await harness.open(`/conversations/${weather.id}`);
    await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
    expect(await page.locator("#content h2").innerText()).toBe(`Conversation ${weather.id}`);
    await expect
      .poll(() => page.locator("#list li.selected").getAttribute("data-id"))
      .toBe(weather.id);
    await page.close();
  });

  it("B14 /conversations/:id/messages/:messageId scrolls to the message and focuses it, in any view", async () => {
    const { long } = harness.seeded;
    const page = await harness.open(`/conversations/${long.id}/messages/${long.last}?view=chatml`);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-source")))
      .toBe(long.last);
    expect(await page.locator('input[name="view"]:checked').getAttribute("value")).toBe("chatml");
    const visible = await page.locator(`#content [data-source="${long.last}"]`).isVisible();
    expect(visible).toBe(true);
    await page.close();
  });

  it("B14 ?anchor= opens one branch and ?view= the view", async () => {
    const { weather } = harness.seeded;
    const page = await harness.open(
      `/conversations/${weather.id}?view=model-visible&anchor=${weather.forkAnswer}`,
    );
    await expect.poll(() => page.locator("#content article.message").count()).toBe(2);
    expect(await page.locator('input[name="view"]:checked').getAttribute("value")).toBe(
      "model-visible",
    );
    expect(await page.locator("#detail-count").innerText()).toContain(
      `the context of ${weather.forkAnswer}`,
    );
    expect(await page.locator("#branch").inputValue()).toBe(weather.forkAnswer);
    await page.close();
  });

  it("B14 /jobs/:id and /jobs/:id/items/:itemKey open the job and its item", async () => {
    const { job } = harness.seeded;
    const page = await harness.open(`/jobs/${job.id}`);
    await expect.poll(() => page.locator("#content .turn").count()).toBe(1);
    await page.goto(`${harness.url}/jobs/${job.id}/items/${encodeURIComponent(job.itemKey)}`);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-item-key")))
      .toBe(job.itemKey);
    expect(await page.locator(`[data-item-key="${job.itemKey}"] .diff`).innerText()).toContain(
      "+export const a = 2;",
    );
    await page.close();
  });

  it("B14 back and forward walk the addresses visited", async () => {
    const { weather, long } = harness.seeded;
    const page = await harness.open("/conversations");
    await page.locator(`#list li[data-id="${weather.id}"] a`).click();
    await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
    await page.locator(`#list li[data-id="${long.id}"] a`).click();
    await expect
      .poll(() => page.locator("#detail-count").innerText())
      .toContain("300 messages shown");
    await page.goBack();
    await expect
      .poll(() => page.locator("#content h2").innerText())
      .toBe(`Conversation ${weather.id}`);
    expect(page.url()).toBe(`${harness.url}/conversations/${weather.id}`);
    await page.goForward();
    await expect
      .poll(() => page.locator("#content h2").innerText())
      .toBe(`Conversation ${long.id}`);
    await page.close();
  });

  it("B14 an address naming nothing says so", async () => {
    const { weather } = harness.seeded;
    const page = await harness.open(`/conversations/${weather.id}/messages/msg_missing`);
    await expect
      .poll(() => page.locator("#content [role=alert]").innerText())
      .toContain("No message msg_missing");
    await page.goto(`${harness.url}/jobs/job_missing`);
    await expect
      .poll(() => page.locator("#content [role=alert]").innerText())
      .toContain("resource_not_found");
    await page.close();
  });
});
