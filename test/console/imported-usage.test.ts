/**
 * The console shows all the usage of an imported conversation whose source condensed part of
 * its history away (issue 35 item 4): a real Roo Code task imported into the store counts the
 * requests whose answers are no longer in the history in the conversation's totals, and its
 * first message says how many there were, with their tokens and cost. Before, the totals held
 * only the requests answered in the history (226 tokens in of 484,656).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importChainsIntoDatabase } from "../../packages/server/src/gateway/import/chains.js";
import { fixturesRoot } from "../interop/fixture-files.js";
import { hasChromium, SCREENSHOTS, startConsole, type ConsoleHarness } from "./harness.js";

const ROO_CONDENSED = `${fixturesRoot}cline/roo-3.2x-condensed/ac8aa7b4-319c-4925-a139-4f4adca81921/api_conversation_history.json`;

describe.skipIf(!hasChromium)(
  "console: an imported conversation's usage in Chromium",
  { timeout: 180_000 },
  () => {
    let harness: ConsoleHarness;
    beforeAll(async () => {
      harness = await startConsole();
    }, 180_000);
    afterAll(async () => {
      await harness?.close();
    });

    it("issue 35 item 4 B14 a condensed Roo Code task shows every request's tokens and cost, those condensed away on the history's first message", async () => {
      const report = await importChainsIntoDatabase(
        harness.database,
        "console",
        "cline",
        harness.seeded.subject,
        [ROO_CONDENSED],
      );
      const id = report.conversations[0]?.conversationId ?? "";
      expect(report.conversations.map((entry) => entry.outcome)).toEqual(["imported"]);
      const page = await harness.open(`/conversations/${id}`);
      const totals = page.locator("#content .totals");
      await expect
        .poll(() => totals.innerText())
        .toContain(
          "59 model calls (35 whose answers are no longer in the history: condensed or compacted away) · tokens in 484,656, cache read 2,078,579, cache write 1,272,896, out 47,864 · $5.9720 (59 reported by the provider)",
        );
      const first = page.locator("#content article.message").first();
      expect(await first.innerText()).toContain(
        "35 model calls whose answers are not in this history (condensed or compacted away by the source, or never kept) · tokens in 484,430",
      );
      expect(await first.locator(".outside-calls").innerText()).toMatch(
        /\$\d+\.\d{6} \(35 reported\)/,
      );
      await page.screenshot({ path: join(SCREENSHOTS, "conversation-condensed-usage-1440.png") });
      await page.close();
    });
  },
);
