// The canonical JSON writer against JSON.stringify of the same value, and the format 1 decoder
// against JSON.parse of the same bytes, on a seeded conversation of 5,000 turns.
// Run: node bin/run-ts.js bench/canonical-json/run.ts [--turns N] [--rounds N]
import { createHash } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { canonicalJsonBytes } from "../../packages/library/src/core/canonical-json.js";
import { safeParseStrictJson } from "../../packages/library/src/core/strict-json.js";
import { conversationSchema } from "../../packages/library/src/format/conversation-schema.js";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import {
  createHistoryEncodingCache,
  encodeConversation,
} from "../../packages/library/src/format/encode.js";
import { generateConversation } from "../workload/conversation.js";

const { values } = parseArgs({
  options: { turns: { type: "string", default: "5000" }, rounds: { type: "string", default: "7" } },
});
const turns = Number(values.turns);
const rounds = Number(values.rounds);

const { conversation, images } = generateConversation({ turns, seed: 1 });

/**
 * Times several contenders interleaved (one run of each per round, after one warm-up round),
 * so that load from other processes falls on all of them alike; returns each one's median ms.
 */
function timeInterleaved(contenders: readonly (() => unknown)[]): number[] {
  for (const run of contenders) run();
  const samples: number[][] = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    contenders.forEach((run, index) => {
      const start = process.hrtime.bigint();
      run();
      samples[index]?.push(Number(process.hrtime.bigint() - start) / 1e6);
    });
  }
  return samples.map((list) => {
    list.sort((a, b) => a - b);
    return list[Math.floor(list.length / 2)] ?? Number.NaN;
  });
}

// JSON.stringify cannot write Maps: give it the same data with the maps as plain objects.
const plain = {
  ...conversation,
  feedback: Object.fromEntries(conversation.feedback),
  skillCards: Object.fromEntries(conversation.skillCards),
  lintRuleCards: Object.fromEntries(conversation.lintRuleCards),
  approvalCards: Object.fromEntries(conversation.approvalCards),
};

const canonical = canonicalJsonBytes(conversation);
const compact = Buffer.from(JSON.stringify(plain), "utf8");
const megabytes = canonical.length / 1e6;

const cache = createHistoryEncodingCache();
encodeConversation(conversation, cache);
const [stringifyMs = 0, writerMs = 0, encodeMs = 0, warmMs = 0] = timeInterleaved([
  () => Buffer.from(JSON.stringify(plain), "utf8"),
  () => canonicalJsonBytes(conversation),
  () => encodeConversation(conversation),
  () => encodeConversation(conversation, cache),
]);
const rows: [string, number, string][] = [
  ["JSON.stringify + UTF-8 (baseline: unsorted, compact)", stringifyMs, "1.00"],
  ["canonical writer (canonicalJsonBytes)", writerMs, (stringifyMs / writerMs).toFixed(2)],
  ["encodeConversation, no cache", encodeMs, (stringifyMs / encodeMs).toFixed(2)],
  ["encodeConversation, warm history cache", warmMs, (stringifyMs / warmMs).toFixed(2)],
];

const parsed = JSON.parse(canonical.toString("utf8")) as unknown;
let imageBytes = 0;
for (const bytes of images.values()) imageBytes += bytes.length;
const [parseMs = 0, strictMs = 0, zodMs = 0, decodeMs = 0, hashMs = 0] = timeInterleaved([
  () => JSON.parse(canonical.toString("utf8")),
  () => safeParseStrictJson(canonical.toString("utf8")),
  () => conversationSchema.safeParse(parsed),
  () => {
    const result = decodeConversation(canonical);
    if (!result.ok) throw new Error(result.reason.message);
  },
  () => {
    for (const bytes of images.values()) createHash("sha256").update(bytes).digest("hex");
  },
]);
const parseRows: [string, number, string][] = [
  ["JSON.parse of the canonical bytes (baseline)", parseMs, "1.00"],
  ["strict parser alone", strictMs, (parseMs / strictMs).toFixed(2)],
  ["zod validation alone", zodMs, (parseMs / zodMs).toFixed(2)],
  [
    "decodeConversation (checked JSON.parse fast path + validation)",
    decodeMs,
    (parseMs / decodeMs).toFixed(2),
  ],
  [`SHA-256 of the ${images.size} images (${(imageBytes / 1e6).toFixed(1)} MB)`, hashMs, "-"],
];

function table(title: string, ratioName: string, data: [string, number, string][]): void {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(
    `| what | ms (median of ${rounds}) | MB/s | ${ratioName} |\n| --- | ---: | ---: | ---: |\n`,
  );
  for (const [name, ms, ratio] of data) {
    process.stdout.write(
      `| ${name} | ${ms.toFixed(1)} | ${(megabytes / (ms / 1000)).toFixed(0)} | ${ratio} |\n`,
    );
  }
}

process.stdout.write(
  `conversation: ${turns} turns, ${conversation.history.length} messages, ${conversation.items.length} items; canonical ${megabytes.toFixed(1)} MB, compact JSON ${(compact.length / 1e6).toFixed(1)} MB\n` +
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}; Node ${process.version}\n`,
);
table(
  "Writing (throughput relative to JSON.stringify; goal >= 0.50)",
  "throughput vs JSON.stringify",
  rows,
);
table("Reading (throughput relative to JSON.parse)", "throughput vs JSON.parse", parseRows);
const ratio = stringifyMs / writerMs;
const reopen = decodeMs / (parseMs + hashMs);
process.stdout.write(
  `\nwriter/JSON.stringify throughput ratio: ${ratio.toFixed(2)} (goal >= 0.50: ${ratio >= 0.5 ? "met" : "NOT met"})\n` +
    `decode time / JSON.parse time: ${(decodeMs / parseMs).toFixed(2)}x; decode / (JSON.parse + image SHA-256): ${reopen.toFixed(2)}x\n`,
);
