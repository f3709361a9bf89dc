/**
 * Find anything (issue 20): the search box finds a Japanese phrase and an emoji across
 * conversations and jobs and opens the message that holds it; the list filters narrow by
 * subject prefix, model, status and date; find within a conversation steps through matches.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";
import { EMOJI_TEXT, JAPANESE_PHRASE } from "./seed.js";

describe.skipIf(!hasChromium)(
  "console: search, filters and find in Chromium",
  { timeout: 180_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
    });

    it("B14 search finds a Japanese phrase and opens the message that holds it", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open("/conversations");
      await page.locator("#search").fill(JAPANESE_PHRASE.slice(3, 7));
      await page.locator("#search-form button").click();
      await expect.poll(() => page.locator("#list li[data-hit]").count()).toBe(1);
      expect(page.url()).toContain(`q=${encodeURIComponent(JAPANESE_PHRASE.slice(3, 7))}`);
      expect(await page.locator("#list li[data-hit]").innerText()).toContain(JAPANESE_PHRASE);
      await page.locator("#list li[data-hit] a").click();
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-id")))
        .toBe(weather.firstUser);
      await page.close();
    });

    it("B14 search finds an emoji, and items of jobs as well as messages", async () => {
      const { weather, job } = harness.seeded;
      const page = await harness.open(`/conversations?q=${encodeURIComponent("🌈")}`);
      await expect.poll(() => page.locator("#list li[data-hit]").count()).toBe(1);
      expect(await page.locator("#list li[data-hit]").getAttribute("data-hit")).toBe(
        weather.answer,
      );
      expect(await page.locator("#list").innerText()).toContain(EMOJI_TEXT);
      await page.goto(
        `${harness.url}/conversations?q=${encodeURIComponent("+export const a = 2")}`,
      );
      await expect.poll(() => page.locator("#list li[data-hit]").count()).toBe(1);
      await page.locator("#list li[data-hit] a").click();
      await expect
        .poll(() => page.url())
        .toContain(`/jobs/${job.id}/items/${encodeURIComponent(job.itemKey)}`);
      await page.close();
    });

    it("B14 the list filters by subject prefix, model and date", async () => {
      const { weather, long, subject } = harness.seeded;
      const page = await harness.open(
        `/conversations?subject=${encodeURIComponent(subject.slice(0, 10))}`,
      );
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBe(2);
      await page.goto(`${harness.url}/conversations?model=gpt-5`);
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBe(1);
      expect(await page.locator("#list li[data-id]").getAttribute("data-id")).toBe(weather.id);
      await page.goto(`${harness.url}/conversations?to=2000-01-01`);
      await expect
        .poll(() => page.locator("#list-count").innerText())
        .toContain("No conversations match the filter");
      const today = new Date().toISOString().slice(0, 10);
      await page.goto(`${harness.url}/conversations?from=${today}&to=${today}`);
      await expect.poll(() => page.locator(`#list li[data-id="${long.id}"]`).count()).toBe(1);
      await page.close();
    });

    it("B14 find within a conversation steps from match to match", async () => {
      const { long } = harness.seeded;
      const page = await harness.open(`/conversations/${long.id}`);
      await expect
        .poll(() => page.locator("#detail-count").innerText())
        .toContain("300 messages shown");
      await page.locator("#find").fill("Message 29");
      await page.locator("#find").press("Enter");
      await expect.poll(() => page.locator("#find-count").innerText()).toBe("match 1 of 11");
      await page.locator("#find").press("Enter");
      await expect.poll(() => page.locator("#find-count").innerText()).toBe("match 2 of 11");
      expect(await page.locator("#content .found").innerText()).toContain("Message 290 of");
      await page.close();
    });
  },
);
