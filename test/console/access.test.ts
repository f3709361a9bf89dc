/**
 * Everyone can use the console (issue 20): a keyboard-only walk from the list through a
 * conversation's messages with a visible focus, axe-core finding no violation on the list, a
 * conversation, the side-by-side view, a job and search results (light and dark, 1440 and
 * 390 px wide), and screenshots of every screen at both sizes kept as test artefacts
 * under .verbatim-test/screenshots (docs/console.md shows them).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, SCREENSHOTS, startConsole, type ConsoleHarness } from "./harness.js";

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

interface AxeViolation {
  readonly id: string;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy refuses an
  // inline <script>, which is what addScriptTag would add.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(context: Document): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document);
    return result.violations.map((one) => ({
      id: one.id,
      help: one.help,
      nodes: one.nodes.map((node) => ({ target: node.target })),
    }));
  });
  return violations.map(
    (one) =>
      `${one.id} (${one.help}): ${one.nodes
        .map((node) => node.target.join(" "))
        .slice(0, 5)
        .join(", ")}`,
  );
}

const SIZES = [
  { name: "1440", viewport: { width: 1440, height: 900 } },
  { name: "390", viewport: { width: 390, height: 844 } },
] as const;

describe.skipIf(!hasChromium)(
  "console: keyboard, accessibility and screenshots in Chromium",
  { timeout: 240_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
    });

    it("B14 a keyboard-only walk: the list, a conversation, its messages one by one, with a visible focus", async () => {
      const { weather } = harness.seeded;
      const page = await harness.open("/");
      await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(1);
      // Tab to the first list entry, arrow down to the weather conversation, open it.
      for (let step = 0; step < 30; step++) {
        await page.keyboard.press("Tab");
        if (await page.evaluate(() => document.activeElement?.closest("#list") !== null)) break;
      }
      expect(
        await page.evaluate(() =>
          document.activeElement?.closest("#list li")?.getAttribute("data-id"),
        ),
      ).toBeTruthy();
      for (let step = 0; step < 10; step++) {
        const id = await page.evaluate(() =>
          document.activeElement?.closest("#list li")?.getAttribute("data-id"),
        );
        if (id === weather.id) break;
        await page.keyboard.press("ArrowDown");
      }
      const outline = await page.evaluate(
        () => getComputedStyle(document.activeElement as Element).outlineStyle,
      );
      expect(outline).not.toBe("none");
      await page.keyboard.press("Enter");
      await expect.poll(() => page.url()).toBe(`${harness.url}/conversations/${weather.id}`);
      await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
      // The skip link leads to the pane; arrow keys walk the messages.
      await page.locator("#content").focus();
      const visited: string[] = [];
      for (let step = 0; step < 8; step++) {
        await page.keyboard.press("ArrowDown");
        visited.push(
          (await page.evaluate(() => document.activeElement?.getAttribute("data-id"))) ?? "",
        );
      }
      expect(new Set(visited).size).toBe(8);
      expect(visited[0]).toBe(weather.firstUser);
      expect(
        await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle),
      ).not.toBe("none");
      await page.keyboard.press("ArrowUp");
      expect(await page.evaluate(() => document.activeElement?.getAttribute("data-id"))).toBe(
        visited[6],
      );
      // Tab reaches the message's own controls (link, copy, compare).
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.tagName)).toMatch(/^(A|BUTTON)$/);
      await page.close();
    });

    for (const scheme of ["light", "dark"] as const) {
      for (const size of SIZES) {
        it(`B14 axe-core finds no violation and the screens are captured (${scheme}, ${size.name} px)`, async () => {
          const { weather, job } = harness.seeded;
          const page = await harness.browser.newPage({
            viewport: size.viewport,
            colorScheme: scheme,
          });
          await page.addInitScript(
            (token) => sessionStorage.setItem("verbatim.operatorToken", token),
            "vop_test-operator-token",
          );
          const shot = (name: string) =>
            page.screenshot({ path: join(SCREENSHOTS, `${name}-${scheme}-${size.name}.png`) });
          const problems: string[] = [];

          await page.goto(`${harness.url}/`);
          await expect.poll(() => page.locator("#list li[data-id]").count()).toBeGreaterThan(1);
          problems.push(...(await axeViolations(page)).map((one) => `list: ${one}`));
          await shot("list");

          await page.locator(`#list li[data-id="${weather.id}"] a`).click();
          await expect.poll(() => page.locator("#content article.message").count()).toBe(8);
          problems.push(...(await axeViolations(page)).map((one) => `conversation: ${one}`));
          // Regression: the phone layout was 38 px wide; a message takes the screen's width.
          const width = await page
            .locator("#content article.message")
            .first()
            .evaluate((node) => node.getBoundingClientRect().width);
          // (at 1440 px the list takes a column beside it).
          expect(width).toBeGreaterThan(size.viewport.width * (size.name === "390" ? 0.85 : 0.6));
          await shot("conversation");

          await page.locator(`article[data-id="${weather.call}"] button.compare`).click();
          await expect.poll(() => page.locator(".compare-column").count()).toBe(3);
          problems.push(...(await axeViolations(page)).map((one) => `compare: ${one}`));
          await shot("compare");

          await page.locator('input[name="view"][value="model-visible"]').check();
          await expect
            .poll(() => page.locator("#detail-count").innerText())
            .toContain("model-visible messages shown");
          await shot("model-visible");

          await page.goBack();
          await page.goBack();
          await expect.poll(() => page.url()).toBe(`${harness.url}/`);
          await page.locator("#tab-jobs").click();
          await page.locator(`#list li[data-id="${job.id}"] a`).click();
          await expect.poll(() => page.locator("#content .turn").count()).toBe(1);
          problems.push(...(await axeViolations(page)).map((one) => `job: ${one}`));
          await shot("job");

          // At 390 px the list (and the search box above it) shows once nothing is selected.
          await page.goto(`${harness.url}/conversations`);
          await page.locator("#search").fill("天気");
          await page.locator("#search-form button").click();
          await expect.poll(() => page.locator("#list li[data-hit]").count()).toBeGreaterThan(0);
          problems.push(...(await axeViolations(page)).map((one) => `search: ${one}`));
          await shot("search");
          expect(problems).toEqual([]);
          await page.close();
        });
      }
    }
  },
);
