/**
 * The console reads a conversation like a conversation (B14, issue 20): turns, tool calls
 * paired with their results, facts per model call, images with their SHA-256, a failure and a
 * compression summary shown as what they are, forks with a picker, a long conversation read
 * to its end, and an image a recorded call named by URL shown as that URL (a link the page does
 * not load), not as dropped.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { TEST_OPERATOR_TOKEN } from "../support/server.js";
import { hasChromium, SCREENSHOTS, startConsole, type ConsoleHarness } from "./harness.js";
import { LONG_LAST_TEXT } from "./seed.js";
import { seedImages, TINY_PNG, TINY_PNG_SHA256 } from "./seed-images.js";

/** An image a recorded call named by URL (passed through unfetched, issue 18). */
const IMAGE_URL = "https://images.example.com/receipts/2026-11-30.png?size=large";

if (!hasChromium)
  process.stderr.write(
    "\n[notice] /usr/bin/chromium is missing: the console browser tests are SKIPPED\n\n",
  );

describe.skipIf(!hasChromium)(
  "console: reading conversations in Chromium",
  { timeout: 180_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
    });

    it("B14 a conversation reads as turns: a call paired with its result, facts per call, the image's SHA-256, a failure and a summary as such", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open("/");
      await page.locator(`#list li[data-id="${weather.id}"] a`).click();
      await expect.poll(() => page.url()).toBe(`${harness.url}/conversations/${weather.id}`);
      const content = page.locator("#content");
      await expect.poll(() => content.locator("article.message").count()).toBe(8);
      const text = await content.innerText();
      expect(text).toContain("Turn 1");
      expect(text).toContain("claude-sonnet-4-5");
      expect(text).toContain("tokens in 812, cache read 1,200, cache write 64, out 41");
      expect(text).toContain(`SHA-256 ${"a".repeat(64)}`);
      expect(text).toContain("upstream_overloaded: the provider is overloaded");
      expect(text).toContain("compression summary");
      expect(text).toContain("Replaces");
      expect(text).toMatch(/3 model calls · tokens in 2,417/);
      // The call links to its result and the result back to its call.
      const call = content.locator('[data-call="toolu_01Page"]');
      await expect
        .poll(() => call.locator("a.pair").getAttribute("href"))
        .toBe(`/conversations/${weather.id}/messages/${weather.toolResult}`);
      await call.locator("a.pair").click();
      await expect
        .poll(() => page.url())
        .toBe(`${harness.url}/conversations/${weather.id}/messages/${weather.toolResult}`);
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-id")))
        .toBe(weather.toolResult);
      await page.screenshot({ path: join(SCREENSHOTS, "conversation-stored-1440.png") });
      await page.close();
    });

    it("B14 model-visible shows the instructions and tools the model received, and each call its cost (regression: left out)", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open(
        `/conversations/${weather.id}?view=model-visible&anchor=${weather.answer}`,
      );
      const input = page.locator("#content .model-input");
      await expect.poll(() => input.count()).toBe(1);
      expect(await input.innerText()).toContain("Be brief and name the city.");
      expect(await input.innerText()).toContain("1 tool");
      expect(await input.innerText()).toContain("at most 256 output tokens");
      expect(await page.locator("#content .totals").innerText()).toMatch(
        /\$\d+\.\d{4} \(2 estimated from prices\)/,
      );
      await page.close();
    });

    it("B14 a recorded conversation shows where the prompt cache broke", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open(`/conversations/${weather.id}`);
      const report = page.locator("#content .cache-report");
      await expect.poll(() => report.count()).toBe(1);
      const summary = await report.locator("summary").first().innerText();
      expect(summary).toContain("Prompt cache: 2 recorded calls");
      expect(summary).toContain("1 break");
      expect(await report.locator("tr.cache-broken").count()).toBe(1);
      expect(await report.innerText()).toContain("Today is Tuesday.");
      // Issue 33: each call's request and response, read on opening, pretty-printed and raw.
      const broken = report.locator("tr.cache-broken");
      await broken.locator("details.recorded-request summary").click();
      const request = broken.locator("details.recorded-request");
      await expect.poll(() => request.locator("pre.raw").count()).toBe(1);
      const raw = await request.locator("pre.raw").innerText();
      expect(raw).toContain("Today is Tuesday.");
      expect(JSON.parse(raw)).toMatchObject({ messages: expect.any(Array) });
      expect(await request.locator("pre.pretty").innerText()).toContain('\n  "messages": [');
      await broken.locator("details.recorded-response summary").click();
      const response = broken.locator("details.recorded-response");
      await expect.poll(() => response.locator("pre.raw").count()).toBe(1);
      expect(JSON.parse(await response.locator("pre.raw").innerText())).toMatchObject({
        id: "msg_rcall_2",
        content: [{ type: "text", text: "Hi" }],
      });
      expect(await response.locator(".note").first().innerText()).toMatch(
        /^application\/json, \d+ characters$/,
      );
      // Issue 33: the answer names its recorded call, whose bodies open the same way.
      const answer = page.locator(`#content article[data-id="${harness.seeded.weather.answer}"]`);
      await expect.poll(() => answer.locator(".recorded-call").count()).toBe(1);
      expect(await answer.locator(".recorded-call").innerText()).toContain("recorded call rcall_2");
      await answer.locator(".recorded-call details.recorded-response summary").click();
      await expect
        .poll(() => answer.locator(".recorded-call details.recorded-response pre.pretty").count())
        .toBe(1);
      expect(
        await answer.locator(".recorded-call details.recorded-response pre.pretty").innerText(),
      ).toContain('"id": "msg_rcall_2"');
      // And its cache verdict: the prefix broke against the previous call, and where.
      await answer.locator(".recorded-call details.recorded-cache summary").click();
      const verdict = answer.locator(".recorded-call details.recorded-cache");
      await expect.poll(() => verdict.locator(".verdict").count()).toBeGreaterThan(1);
      expect(await verdict.innerText()).toMatch(/prefix broken/);
      expect(await verdict.innerText()).toContain("first difference at");
      expect(await verdict.innerText()).toContain("Today is Tuesday.");
      // A conversation the gateway did not record has no report.
      await page.goto(`${harness.url}/conversations/${harness.seeded.long.id}`);
      await expect
        .poll(() => page.locator("#detail-count").innerText())
        .toContain("300 messages shown");
      expect(await page.locator("#content .cache-report").count()).toBe(0);
      await page.close();
    });

    it("B14 a fork is a branch in the picker; picking one shows that branch alone and says which", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open("/");
      await page.locator(`#list li[data-id="${weather.id}"] a`).click();
      await page.locator('input[name="view"][value="chatml"]').check();
      await expect.poll(() => page.locator("#branch option").count()).toBe(3);
      await expect
        .poll(() => page.locator("#detail-count").innerText())
        .toContain("all 2 branches in the order written");
      await page.locator("#branch").selectOption(weather.forkAnswer);
      await expect
        .poll(() => page.url())
        .toBe(
          `${harness.url}/conversations/${weather.id}?view=chatml&anchor=${weather.forkAnswer}`,
        );
      await expect.poll(() => page.locator("#content article.message").count()).toBe(2);
      const text = await page.locator("#content").innerText();
      expect(text).toContain("another branch: rain later");
      expect(text).not.toContain("It is sunny in Oslo");
      expect(await page.locator("#detail-count").innerText()).toContain(
        `the context of ${weather.forkAnswer}`,
      );
      await page.goBack();
      await expect.poll(() => page.locator("#content article.message").count()).toBeGreaterThan(2);
      await page.close();
    });

    it("B14 the branches are drawn as a tree with their fork points; Tab and Enter pick one", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open(`/conversations/${weather.id}`);
      const drawing = page.locator("svg.branch-drawing");
      await expect.poll(() => drawing.locator("a.lane").count()).toBe(2);
      // The later branch leaves the earlier one at its fork point, drawn as a dot linking to it.
      const fork = drawing.locator("a.fork");
      expect(await fork.count()).toBe(1);
      const forkedAt = await fork.getAttribute("data-fork");
      expect(forkedAt).toBeTruthy();
      const labels = await drawing
        .locator("a.lane")
        .evaluateAll((links) => links.map((link) => link.getAttribute("aria-label") ?? ""));
      expect(labels[0]).toMatch(/^branch 1: \d+ messages, ends at msg_\w+$/);
      expect(labels[1]).toMatch(
        new RegExp(`^branch 2: \\d+ messages, forks after ${forkedAt}, ends at msg_\\w+$`),
      );
      expect(await drawing.locator(`a.lane[data-leaf="${weather.forkAnswer}"]`).count()).toBe(1);
      await page.screenshot({ path: join(SCREENSHOTS, "branches-drawn-1440.png") });
      // Keyboard only: focus the picker, then Tab to the second branch's lane, and Enter.
      await page.locator("#branch").focus();
      let reached = false;
      for (let step = 0; step < 6 && !reached; step++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate(
          (leaf) => document.activeElement?.getAttribute("data-leaf") === leaf,
          weather.forkAnswer,
        );
      }
      expect(reached).toBe(true);
      await page.keyboard.press("Enter");
      await expect
        .poll(() => page.url())
        .toBe(`${harness.url}/conversations/${weather.id}?anchor=${weather.forkAnswer}`);
      await expect.poll(() => page.locator("#content article.message").count()).toBe(2);
      const shown = page.locator('svg.branch-drawing a.lane[aria-current="true"]');
      await expect.poll(() => shown.getAttribute("data-leaf")).toBe(weather.forkAnswer);
      expect(await page.locator("#branch").inputValue()).toBe(weather.forkAnswer);
      // The fork point's dot opens its message.
      await page.locator("svg.branch-drawing a.fork").click();
      await expect.poll(() => page.url()).toContain(`/messages/${forkedAt}`);
      await page.close();
    });

    it("B14 an image with held bytes is a thumbnail with its SHA-256; one not held says so", async () => {
      const images = await seedImages(harness.database, harness.seeded.subject);
      const page = await harness.open(`/conversations/${images.conversationId}`);
      const thumbnail = page.locator(`article[data-id="${images.messageId}"] img.thumbnail`);
      await expect
        .poll(() => thumbnail.evaluate((node) => (node as HTMLImageElement).naturalWidth))
        .toBe(1);
      expect(await thumbnail.getAttribute("src")).toMatch(/^blob:/);
      const captions = await page
        .locator(`article[data-id="${images.messageId}"] figure.image figcaption`)
        .allInnerTexts();
      expect(captions[0]).toBe(`image/png · ${TINY_PNG.length} bytes · SHA-256 ${TINY_PNG_SHA256}`);
      await expect
        .poll(async () =>
          page
            .locator(`article[data-id="${images.messageId}"] figure.image figcaption`)
            .nth(1)
            .innerText(),
        )
        .toContain("bytes not shown: resource_not_found");
      await page.screenshot({ path: join(SCREENSHOTS, "image-thumbnail-1440.png") });
      await page.close();
    });

    it("B14 a 300-message conversation shows its last message after scrolling, and says how many are shown", async () => {
      const { long } = harness.seeded;
      const page = await harness.open("/");
      await page.locator(`#list li[data-id="${long.id}"] a`).click();
      await expect
        .poll(() => page.locator("#detail-count").innerText())
        .toContain("300 messages shown (all 300 stored messages)");
      const last = page.locator(`article[data-id="${long.last}"]`);
      for (let step = 0; step < 60 && !(await last.isVisible()); step++) {
        await page.locator("#content").evaluate((node) => node.scrollBy(0, node.clientHeight));
        await page.waitForTimeout(50);
      }
      await expect.poll(() => last.isVisible()).toBe(true);
      expect(await last.innerText()).toContain(LONG_LAST_TEXT);
      // Virtualised: far fewer message nodes exist than messages.
      expect(await page.locator("#content article.message").count()).toBeLessThan(300);
      await page.close();
    });

    it("B14 a message cut by the page size limit says so where it is cut and loads in full on demand (regression: cut with only a badge)", async () => {
      const store = new GatewayMessageStore(harness.database);
      const long = `${"A long tool result line. ".repeat(60_000)}THE END`;
      const [first, big] = await store.appendMessages(harness.seeded.subject, {
        previousMessageId: null,
        messages: [
          { role: "user", content: [{ type: "text", text: "Read the log" }] },
          { role: "assistant", content: [{ type: "text", text: long }] },
        ],
      });
      const page = await harness.open(`/conversations/${first?.conversationId}`);
      const article = page.locator(`article[data-id="${big?.id}"]`);
      await expect.poll(() => article.locator(".cut").count()).toBe(1);
      expect(await page.locator(`article[data-id="${first?.id}"] .cut`).count()).toBe(0);
      expect(await page.locator("#detail-count").innerText()).toContain(
        "1 may be cut by the page size limit",
      );
      await article.locator("button.load-full").click();
      const full = page.locator(`article[data-id="${big?.id}"]`);
      await expect.poll(() => full.locator(".note").first().innerText()).toBe("Loaded in full.");
      await full.locator("button.show-all").click();
      expect(await full.locator("pre.text").innerText()).toContain("THE END");
      await page.close();
    });

    it("B14 the token comes from the fragment, is removed from the address and never sent in a URL", async () => {
      const page = await harness.browser.newPage();
      const requests: string[] = [];
      page.on("request", (request) => requests.push(request.url()));
      await page.goto(`${harness.url}/#token=${encodeURIComponent(TEST_OPERATOR_TOKEN)}`);
      expect(page.url()).toBe(`${harness.url}/`);
      await expect.poll(() => page.locator("#status").innerText()).toBe("connected");
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(0);
      expect(requests.some((one) => one.includes(TEST_OPERATOR_TOKEN))).toBe(false);
      await page.close();
    });

    it("B14 an image a recorded call named by URL shows its URL as a link, not as dropped", async () => {
      const store = new GatewayMessageStore(harness.database);
      const [message] = await store.appendMessages(harness.seeded.subject, {
        previousMessageId: null,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Total of this receipt?" },
              { type: "imageOmitted", mimeType: "image/png" },
              { type: "imageOmitted", mimeType: "image/jpeg" },
            ],
            gateway: { imageUrls: { "1": IMAGE_URL } },
          },
        ],
      });
      if (message === undefined) throw new Error("the seed message was not stored");
      const page = await harness.open(`/conversations/${message.conversationId}`);
      const article = page.locator(`article[data-id="${message.id}"]`);
      const link = article.locator("figure.image a");
      await expect.poll(() => link.count()).toBe(1);
      expect(await link.getAttribute("href")).toBe(IMAGE_URL);
      expect(await link.innerText()).toBe(IMAGE_URL);
      expect(await link.getAttribute("rel")).toBe("noreferrer noopener");
      expect(await article.locator("figure.image figcaption").innerText()).toBe(
        "image link (not loaded by the console)",
      );
      // The console loads nothing from the URL: no <img> points at it.
      expect(await article.locator(`img[src="${IMAGE_URL}"]`).count()).toBe(0);
      // The second image has neither bytes nor URL: it still says so.
      const notes = await article.locator(".note").allInnerTexts();
      expect(notes).toContain("an image (image/jpeg) was dropped here");
      expect(notes.join("\n")).not.toContain("image/png");
      await page.close();
    });
  },
);
