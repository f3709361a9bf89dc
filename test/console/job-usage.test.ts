/**
 * The job view shows the usage and cost of a job's model calls (issue 31): per item, per turn,
 * and summed for the job.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { hasChromium, startConsole, type ConsoleHarness } from "./harness.js";

describe.skipIf(!hasChromium)("console: a job's usage in Chromium", { timeout: 180_000 }, () => {
  let harness: ConsoleHarness;
  beforeAll(async () => {
    harness = await startConsole();
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("issue 31 B14 the job view shows each call's usage, the turn's and the job's sums", async () => {
    const { job, subject } = harness.seeded;
    const jobs = new BackgroundAgentJobs(harness.database);
    const { turns } = await jobs.readTrajectory(subject, job.id);
    await jobs.appendItems(subject, turns[0]?.id ?? "", [
      {
        item_key: "agent:usage-1",
        item: {
          type: "agent_message",
          text: "first call",
          usage: { model: "m-1", input_tokens: 1234, output_tokens: 56, cost_usd: 0.5 },
        },
      },
      {
        item_key: "agent:usage-2",
        item: {
          type: "agent_message",
          text: "second call",
          usage: { model: "m-1", input_tokens: 1000, output_tokens: 44, cost_usd: 0.25 },
        },
      },
    ]);
    const page = await harness.open("/");
    await page.locator("#tab-jobs").click();
    await page.locator(`#list li[data-id="${job.id}"] a`).click();
    await expect
      .poll(() => page.locator("#job-usage").innerText())
      .toContain("Model calls (sum over items): m-1 · tokens calls 2, in 2,234, out 100 · $0.7500");
    expect(await page.locator('#content [data-item-key="agent:usage-1"]').innerText()).toContain(
      "model call: m-1 · tokens in 1,234, out 56 · $0.5000",
    );
    expect(await page.locator("#content .turn").first().innerText()).toContain(
      "Turn usage: m-1 · tokens calls 2, in 2,234, out 100",
    );
    await page.close();
  });
});
