/**
 * The console never hides data (issue 20): an image a recorded call named by URL is passed
 * through unfetched (issue 18) and stored as an `imageOmitted` block with its URL noted in the
 * message's gateway facts (`imageUrls`, by block index). The console shows that URL where the
 * image was, as a link it does not load, and keeps "was dropped here" for an image whose bytes
 * and URL are both unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/message-store.js";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";

const IMAGE_URL = "https://images.example.com/receipts/2026-11-30.png?size=large";

describe.skipIf(!hasChromium)(
  "console: images recorded by URL in Chromium",
  { timeout: 180_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
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
