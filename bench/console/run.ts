// The console page on a 10,000-message conversation (issue 20) in the system's Chromium:
// how soon the first messages are painted and how smoothly the pane scrolls, each beside a
// baseline measured in the same run and the same browser:
// - first rows: a click on the conversation in the list → the page's `verbatim:first-rows`
//   mark, beside the floor of any page: the first page of 1,000 messages fetched and parsed
//   by a bare `fetch` in the same browser (no rendering);
// - all rows: → `verbatim:all-rows` (every cursor followed, 10 pages);
// - scrolling: frames per second and the 95th-percentile frame time while the pane scrolls
//   100 px every frame, then one screen every frame, 3 s each, beside the frame rate of the
//   same tab idle.
// Run: node bin/run-ts.js bench/console/run.ts [--messages 10000] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { build } from "vite";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { buildServer } from "../../packages/server/src/server/app.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "10000" },
    rounds: { type: "string", default: "3" },
  },
});
const MESSAGES = Number(values.messages);
const ROUNDS = Number(values.rounds);
const TOKEN = "vop_bench-console-token";

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-console-"));
const webRoot = join(folder, "web");
await build({
  configFile: new URL("../../web/vite.config.ts", import.meta.url).pathname,
  logLevel: "warn",
  build: { outDir: webRoot, emptyOutDir: true },
});
const database = await openDatabase({ dialect: "sqlite", path: join(folder, "bench.sqlite") });
await migrateDatabase(database);
const store = new GatewayMessageStore(database);
let previous: string | null = null;
let conversationId = "";
for (let start = 0; start < MESSAGES; start += 250) {
  const count = Math.min(250, MESSAGES - start);
  const written = await store.appendMessages("bench-subject", {
    previousMessageId: previous,
    messages: Array.from({ length: count }, (_, offset) => {
      const index = start + offset + 1;
      const text = `Message ${index}: ${"a sentence of ordinary length about the task at hand. ".repeat(1 + (index % 5))}`;
      return index % 2 === 1
        ? { role: "user" as const, content: [{ type: "text" as const, text }] }
        : {
            role: "assistant" as const,
            content: [{ type: "text" as const, text }],
            gateway: {
              model: "claude-sonnet-4-5",
              usage: {
                input: 1000,
                output: 50,
                cacheRead: 900,
                cacheWrite: 0,
                webSearchRequests: 0,
              },
            },
          };
    }),
  });
  const tail = written[written.length - 1];
  previous = tail?.id ?? previous;
  conversationId = tail?.conversationId ?? conversationId;
}
const app = await buildServer({ database, operatorToken: TOKEN, rateLimit: false, webRoot });
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

const median = (list: number[]) =>
  [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? NaN;

interface Round {
  baselineFetch: number;
  firstRows: number;
  allRows: number;
  idleFps: number;
  steadyFps: number;
  steadyP95: number;
  scrollFps: number;
  scrollP95: number;
}

// Page-side code as text: the TypeScript loader would add helpers the page does not have.
const FRAMES_SCRIPT = `new Promise((resolve) => {
  const pane = document.getElementById("content");
  const times = [];
  const start = performance.now();
  requestAnimationFrame(function step(now) {
    times.push(now);
    if (STEP > 0 && pane !== null) pane.scrollBy(0, STEP === 1 ? pane.clientHeight : STEP);
    if (now - start < 3000) requestAnimationFrame(step);
    else {
      const gaps = times.slice(1).map((time, index) => time - times[index]).sort((a, b) => a - b);
      const total = times[times.length - 1] - times[0];
      resolve({ fps: (gaps.length * 1000) / total, p95: gaps[Math.floor(gaps.length * 0.95)] });
    }
  });
})`;

async function frames(
  page: import("playwright-core").Page,
  step: number,
): Promise<{ fps: number; p95: number }> {
  return page.evaluate(FRAMES_SCRIPT.replaceAll("STEP", String(step))) as Promise<{
    fps: number;
    p95: number;
  }>;
}

const rounds: Round[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(
    (token) => sessionStorage.setItem("verbatim.operatorToken", token),
    TOKEN,
  );
  // Baseline: the same first page fetched and parsed with no rendering, from a blank page of
  // the same origin.
  await page.goto(`${url}/healthz`);
  const baselineFetch = await page.evaluate(
    async ({ id, token }) => {
      // Once to warm the server's caches as the page's own request finds them, then timed.
      let took = 0;
      for (let pass = 0; pass < 2; pass++) {
        const started = performance.now();
        const response = await fetch(`/ai-gateway/conversations/${id}/messages?limit=1000`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await response.json();
        took = performance.now() - started;
      }
      return took;
    },
    { id: conversationId, token: TOKEN },
  );
  // Opening the conversation from the list, as an operator does: the clock starts at the click.
  await page.goto(`${url}/`);
  await page.locator(`#list li[data-id="${conversationId}"] a`).waitFor();
  const clickedAt = await page.evaluate((id) => {
    const at = performance.now();
    document.querySelector<HTMLAnchorElement>(`#list li[data-id="${id}"] a`)?.click();
    return at;
  }, conversationId);
  await page.waitForFunction(
    () => performance.getEntriesByName("verbatim:all-rows").length > 0,
    undefined,
    { timeout: 120_000 },
  );
  const marks = await page.evaluate(() => ({
    first: performance.getEntriesByName("verbatim:first-rows")[0]?.startTime ?? NaN,
    all: performance.getEntriesByName("verbatim:all-rows")[0]?.startTime ?? NaN,
  }));
  const start = clickedAt;
  const idle = await frames(page, 0);
  await page.locator("#content").evaluate((pane) => pane.scrollTo(0, 0));
  const steady = await frames(page, 100);
  const scrolled = await frames(page, 1);
  rounds.push({
    baselineFetch,
    firstRows: marks.first - start,
    allRows: marks.all - start,
    idleFps: idle.fps,
    steadyFps: steady.fps,
    steadyP95: steady.p95,
    scrollFps: scrolled.fps,
    scrollP95: scrolled.p95,
  });
  await page.close();
}

const pick = (key: keyof Round) => median(rounds.map((round) => round[key]));
const row = (what: string, value: string, ratio: string) => `| ${what} | ${value} | ${ratio} |`;
console.log(
  `console page, ${MESSAGES.toLocaleString("en")}-message conversation, ${ROUNDS} rounds (medians); ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)}`,
);
console.log("| what | median | ratio |");
console.log("| --- | ---: | ---: |");
console.log(
  row(
    "bare fetch + JSON.parse of the first 1,000 messages: baseline",
    `${pick("baselineFetch").toFixed(0)} ms`,
    "1.00",
  ),
);
console.log(
  row(
    "first messages on the page (click → first rows)",
    `${pick("firstRows").toFixed(0)} ms`,
    `${(pick("firstRows") / pick("baselineFetch")).toFixed(2)}× the bare fetch`,
  ),
);
console.log(
  row(
    `all ${MESSAGES.toLocaleString("en")} messages loaded (every cursor)`,
    `${pick("allRows").toFixed(0)} ms`,
    `${(pick("allRows") / pick("baselineFetch")).toFixed(2)}× the bare fetch`,
  ),
);
const fps = (label: string, key: keyof Round, p95: keyof Round) => {
  console.log(
    row(
      `frames per second, ${label}`,
      pick(key).toFixed(1),
      `${(pick(key) / pick("idleFps")).toFixed(2)} of idle`,
    ),
  );
  console.log(row(`95th-percentile frame time, ${label}`, `${pick(p95).toFixed(1)} ms`, ""));
};
console.log(row("frames per second, idle tab: baseline", pick("idleFps").toFixed(1), "1.00"));
fps("scrolling 100 px a frame (6,000 px/s)", "steadyFps", "steadyP95");
fps(
  "scrolling one screen a frame (a new block to build almost every frame)",
  "scrollFps",
  "scrollP95",
);

await browser.close();
await app.close();
await database.close();
rmSync(folder, { recursive: true, force: true });
