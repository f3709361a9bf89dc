/**
 * The console page under its own policy (issue 31, item 5): an image URL from stored content
 * becomes a link only for http:/https: and an image source only for data:image/…, anything else
 * (`javascript:` in any case or behind spaces and control characters, `vbscript:`,
 * `data:text/html`) is inert text; and the page works in Chromium with its
 * Content-Security-Policy enforced, without a single violation.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { TEST_OPERATOR_TOKEN } from "../support/server.js";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";
import { seedImages, TINY_PNG } from "./seed-images.js";

const UNSAFE_URLS = [
  "javascript:alert(1)",
  "JAVASCRIPT:alert(2)",
  " javascript:alert(3)",
  "\u0001\u001f javascript:alert(4)",
  "java\tscript:alert(5)",
  "vbscript:msgbox(6)",
  "data:text/html,<script>alert(7)</script>",
  "DATA:text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==",
];
const SAFE_LINK = "https://images.example.com/cat.png";
const SAFE_DATA = `data:image/png;base64,${TINY_PNG.toString("base64")}`;

/** Every href and src in #content (links, SVG links, images) with the scheme it resolves to. */
function addresses(page: Page): Promise<{ tag: string; value: string; scheme: string }[]> {
  return page.locator("#content").evaluate((content) =>
    Array.from(content.querySelectorAll("[href], [src]")).flatMap((node) =>
      ["href", "src"].flatMap((name) => {
        const value = node.getAttribute(name);
        if (value === null) return [];
        return [
          {
            tag: node.tagName.toLowerCase(),
            value,
            scheme: new URL(value, location.href).protocol,
          },
        ];
      }),
    ),
  );
}

/** A page with the token in the session that records every CSP violation it meets. */
async function openRecording(harness: ConsoleHarness, path: string): Promise<Page> {
  const page = await harness.browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript((token) => {
    sessionStorage.setItem("verbatim.operatorToken", token);
    const seen: string[] = [];
    (window as unknown as { violations: string[] }).violations = seen;
    document.addEventListener("securitypolicyviolation", (event) =>
      seen.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`),
    );
  }, TEST_OPERATOR_TOKEN);
  await page.goto(`${harness.url}${path}`);
  return page;
}

const violations = (page: Page) =>
  page.evaluate(() => (window as unknown as { violations: string[] }).violations);

describe.skipIf(!hasChromium)(
  "console: stored URLs and the page's policy in Chromium",
  { timeout: 180_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
    });

    it("issue 31 B14 an image URL that is not http:, https: or data:image/ is never a link or an image source", async () => {
      const urls = [...UNSAFE_URLS, SAFE_LINK, SAFE_DATA];
      const [message] = await new GatewayMessageStore(harness.database).appendMessages(
        harness.seeded.subject,
        {
          previousMessageId: null,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "Images named by URL" },
                ...urls.map(() => ({ type: "imageOmitted" as const, mimeType: "image/png" })),
              ],
              gateway: {
                imageUrls: Object.fromEntries(urls.map((url, index) => [String(index + 1), url])),
              },
            },
          ],
        },
      );
      if (message === undefined) throw new Error("the seed message was not stored");
      const jobs = new BackgroundAgentJobs(harness.database);
      const job = await jobs.createJob(harness.seeded.subject, {
        conversationId: message.conversationId,
        retryBudget: 0,
      });
      await jobs.startAttempt(harness.seeded.subject, job.id);
      await jobs.startTurn(harness.seeded.subject, job.id, [
        {
          item_key: "client:1",
          item: {
            type: "user_message",
            text: "Images by URL",
            images: urls.map((url) => ({ url })),
          },
        },
      ]);

      const check = async (page: Page, figures: string) => {
        await expect.poll(() => page.locator(figures).count()).toBe(urls.length);
        const found = await addresses(page);
        const unsafe = found.filter(
          (one) =>
            !["http:", "https:", "blob:"].includes(one.scheme) &&
            !(one.tag === "img" && /^data:image\//.test(one.value)),
        );
        expect(unsafe).toEqual([]);
        // The safe ones still work: the https URL a link, the data:image/ URL an image.
        expect(found.some((one) => one.tag === "a" && one.value === SAFE_LINK)).toBe(true);
        expect(found.some((one) => one.tag === "img" && one.value === SAFE_DATA)).toBe(true);
        // The others are shown, as text.
        const text = await page.locator("#content").innerText();
        for (const url of ["javascript:alert(1)", "vbscript:msgbox(6)", "alert(7)"]) {
          expect(text).toContain(url);
        }
        expect(
          await page.locator(`${figures} figcaption`, { hasText: "shown as text" }).count(),
        ).toBe(UNSAFE_URLS.length);
        expect(await violations(page)).toEqual([]);
      };

      const conversation = await openRecording(harness, `/conversations/${message.conversationId}`);
      await check(conversation, `article[data-id="${message.id}"] figure.image`);
      await conversation.close();
      for (const view of ["stored", "chatml"]) {
        const page = await openRecording(harness, `/jobs/${job.id}?view=${view}`);
        await check(page, "#content figure.image");
        await page.close();
      }
    });

    it("issue 31 B14 the page works under its Content-Security-Policy: no violation, and inline script is refused", async () => {
      const images = await seedImages(harness.database, harness.seeded.subject);
      const { weather, job } = harness.seeded;
      const page = await openRecording(harness, "/");
      await expect.poll(() => page.locator("#status").innerText()).toBe("connected");
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(1);
      // A conversation with a fork (the branch drawing), one with a thumbnail from a blob URL,
      // a job, and search results.
      await page.goto(`${harness.url}/conversations/${weather.id}`);
      await expect.poll(() => page.locator("svg.branch-drawing a.lane").count()).toBe(2);
      expect(
        await page
          .locator("svg.branch-drawing")
          .evaluate((node) => getComputedStyle(node).maxWidth),
      ).toBe("720px");
      await page.goto(`${harness.url}/conversations/${images.conversationId}`);
      const thumbnail = page.locator(`article[data-id="${images.messageId}"] img.thumbnail`);
      await expect
        .poll(() => thumbnail.evaluate((node) => (node as HTMLImageElement).naturalWidth))
        .toBe(1);
      await page.goto(`${harness.url}/jobs/${job.id}`);
      await expect.poll(() => page.locator("#content .turn").count()).toBeGreaterThan(0);
      await page.goto(`${harness.url}/conversations?q=Oslo`);
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(0);
      expect(await violations(page)).toEqual([]);
      // The policy is enforced, not merely sent: an inline script the page did not ship never runs.
      const ran = await page.evaluate(async () => {
        const script = document.createElement("script");
        script.textContent = "window.inlineRan = true";
        document.body.append(script);
        await new Promise((done) => setTimeout(done, 50));
        return (window as unknown as { inlineRan?: boolean }).inlineRan === true;
      });
      expect(ran).toBe(false);
      expect((await violations(page)).join("\n")).toContain("script-src");
      await page.close();
    });
  },
);
