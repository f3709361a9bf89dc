// Render time of the next request of a 5,000-turn conversation (the seeded workload of
// bench/workload/: 20,000 messages, 500 images of 100 KB) for each provider, against
// JSON.stringify of the same body (parsed once from the rendered bytes) in the same rounds.
// Goal: render within 1.5× of JSON.stringify. Medians of interleaved rounds.
import {
  renderRequest,
  PROVIDER_IDS,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import type { Message } from "../../packages/library/src/history/message.js";
import { generateConversation } from "../workload/conversation.js";

const TURNS = 5000;
const ROUNDS = 7;
const NEXT: Message = {
  role: "user",
  content: [{ type: "text", text: "次のターン: one more card ✨" }],
};
const workload = generateConversation({ turns: TURNS, seed: 7 });
const textOnly = generateConversation({ turns: TURNS, seed: 7, imageEvery: 0 });
const images = (sha256: string) => workload.images.get(sha256);
let history: Message[] = [...workload.conversation.history, NEXT];
const tools = [
  {
    name: "batch_design",
    description: "Apply design operations",
    inputSchema: { type: "object", properties: { operations: { type: "string" } } },
  },
  {
    name: "read_file",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  },
];

function render(provider: ProviderId): string {
  return renderRequest(provider, {
    history,
    images,
    options: { model: "m", maxTokens: 8192, system: "You design.", tools, cache: { ttl: "5m" } },
  }).body;
}

function time(action: () => unknown): number {
  const start = process.hrtime.bigint();
  action();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const rows: string[] = [];
const cold = time(() => render("anthropic"));
const variants = [
  { name: "with images", messages: [...workload.conversation.history, NEXT] },
  { name: "text only", messages: [...textOnly.conversation.history, NEXT] },
];
for (const variant of variants) {
  history = variant.messages;
  for (const provider of PROVIDER_IDS) {
    const body = render(provider);
    const value: unknown = JSON.parse(body);
    const renderTimes: number[] = [];
    const stringifyTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      stringifyTimes.push(time(() => JSON.stringify(value)));
      renderTimes.push(time(() => render(provider)));
    }
    const renderMs = median(renderTimes);
    const stringifyMs = median(stringifyTimes);
    rows.push(
      `| ${provider} | ${variant.name} | ${(body.length / 1e6).toFixed(1)} MB | ${stringifyMs.toFixed(0)} | ${renderMs.toFixed(0)} | **${(renderMs / stringifyMs).toFixed(2)}×** |`,
    );
  }
}
const load = (await import("node:os")).loadavg()[0]?.toFixed(1) ?? "?";
process.stdout.write(
  [
    `${TURNS} turns, ${history.length} messages, ${workload.images.size} images (or none); medians of ${ROUNDS} interleaved rounds; load average ${load}`,
    `first render (Anthropic, images not yet base64-encoded): ${cold.toFixed(0)} ms`,
    "",
    "| provider | conversation | body | JSON.stringify ms (baseline) | render ms | render / stringify (goal ≤ 1.5×) |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
  ].join("\n"),
);
