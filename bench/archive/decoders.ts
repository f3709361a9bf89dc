// The decoders of format 1 on the same bytes, against JSON.parse of them, measured in the same
// run (issue 32: a second implementation is kept only where it pays, ≥ 25% on its own
// workload). A seeded conversation (bench/workload/conversation.ts) of each size is encoded
// once; each decoder then decodes it in interleaved rounds, and the median CPU time of each is
// printed with its ratio to the element-wise decoder's:
//   - quick (format/quick-decode.ts): JSON.parse of the whole text and the hand-written check,
//     what the archive uses for a file of up to 8 MiB;
//   - element-wise (format/element-decode.ts): JSON.parse of one value at a time and the same
//     check, what the archive uses for a larger file (for its memory: bench/archive/memory.ts);
//   - whole-file (format/decode.ts): the strict parser and the zod schema, which give the reason
//     a file is unreadable.
// Run with --expose-gc so that each run starts after a collection (the element-wise decoder's
// many small parses otherwise pay for the garbage of the runs before).
//
//   node --expose-gc bin/run-ts.js bench/archive/decoders.ts [--turns 100,700] [--rounds 15]
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { decodeWholeFile } from "../../packages/library/src/format/decode.js";
import { ConversationElementDecoder } from "../../packages/library/src/format/element-decode.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { decodeQuicklyOrDoubt } from "../../packages/library/src/format/quick-decode.js";
import { generateConversation } from "../workload/conversation.js";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "100,700" },
    rounds: { type: "string", default: "15" },
  },
});
const sizes = (values.turns ?? "").split(",").map(Number);
const rounds = Number(values.rounds);
const collect = (globalThis as { gc?: () => void }).gc;

function elementWise(bytes: Uint8Array): unknown {
  const decoder = new ConversationElementDecoder();
  if (!decoder.feed(bytes)) throw new Error("the element-wise decoder gave up");
  const conversation = decoder.finish();
  if (conversation === undefined) throw new Error("the element-wise decoder gave up");
  return conversation;
}

/** Median CPU milliseconds of each contender, run in interleaved rounds after one warm-up. */
function medians(contenders: readonly (readonly [string, () => unknown])[]): number[] {
  const samples: number[][] = contenders.map(() => []);
  for (let round = -1; round < rounds; round++) {
    contenders.forEach(([, run], index) => {
      collect?.();
      const start = process.cpuUsage();
      run();
      const used = process.cpuUsage(start);
      if (round >= 0) samples[index]?.push((used.user + used.system) / 1000);
    });
  }
  return samples.map((list) => {
    list.sort((a, b) => a - b);
    return list[Math.floor(list.length / 2)] ?? Number.NaN;
  });
}

process.stdout.write(
  `bench/archive/decoders: median CPU ms of ${rounds} interleaved rounds${collect === undefined ? " (no --expose-gc)" : ", a collection before each run"}; load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}; Node ${process.version}\n`,
);
for (const turns of sizes) {
  const bytes = encodeConversation(generateConversation({ turns, seed: 1 }).conversation);
  const contenders = [
    ["JSON.parse (reference)", () => JSON.parse(bytes.toString("utf8"))],
    [
      "quick (whole text, hand-written check)",
      () => {
        if (decodeQuicklyOrDoubt(bytes)?.ok !== true) throw new Error("the quick decoder doubted");
      },
    ],
    ["element-wise (one value at a time, hand-written check)", () => elementWise(bytes)],
    [
      "whole-file (strict parser, zod)",
      () => {
        if (!decodeWholeFile(bytes).ok) throw new Error("unreadable");
      },
    ],
  ] as const;
  const times = medians(contenders);
  const element = times[2] ?? Number.NaN;
  process.stdout.write(
    `\n${turns} turns, conversation.json ${(bytes.length / 1e6).toFixed(1)} MB\n\n` +
      "| decoder | CPU ms | ÷ element-wise |\n| --- | ---: | ---: |\n",
  );
  contenders.forEach(([name], index) => {
    const ms = times[index] ?? Number.NaN;
    process.stdout.write(`| ${name} | ${ms.toFixed(1)} | ${(ms / element).toFixed(2)}× |\n`);
  });
}
