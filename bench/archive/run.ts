// The archive benchmark: saving, re-saving and reopening a seeded conversation of N turns
// (bench/workload/conversation.ts) against the physical reference of writing and reading the
// same bytes, and two baselines, all measured in the same run.
//
//   node bin/run-ts.js bench/archive/run.ts [--turns 100,1000,5000]
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { openArchive } from "../../packages/library/src/archive/index.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import { appendTurn, generateConversation } from "../workload/conversation.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TIMED_TURNS = 10;
const UNCHANGED_ROUNDS = 50;

const { values } = parseArgs({ options: { turns: { type: "string", default: "100,1000,5000" } } });
const sizes = (values.turns ?? "").split(",").map(Number);

async function writeDurably(path: string, bytes: Uint8Array | string, flag = "w"): Promise<void> {
  const handle = await open(path, flag);
  try {
    await handle.write(typeof bytes === "string" ? Buffer.from(bytes) : bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function filesUnder(folder: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    sizes.set(path, (await stat(path)).size);
  }
  return sizes;
}

function mapsAsObjects(_key: string, value: unknown): unknown {
  return value instanceof Map ? Object.fromEntries(value) : value;
}

const mean = (values: readonly number[]): number =>
  values.reduce((sum, value) => sum + value, 0) / values.length;
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

interface Row {
  turns: number;
  bulkSaveMs: number;
  tenSavesMs: number;
  saveMs: number;
  referenceSaveMs: number;
  medianSaveMs: number;
  medianReferenceSaveMs: number;
  bytesPerSave: number;
  unchangedMs: number;
  unchangedBytes: number;
  reopenMs: number;
  referenceReopenMs: number;
  diskBytes: number;
  wholeFileMs: number;
  jsonLinesMs: number;
}

async function measure(turns: number): Promise<Row> {
  const work = await mkdtemp(join(tmpdir(), "verbatim-bench-archive-"));
  const packageDir = join(work, "Poster.silverpoint");
  const referenceDir = join(work, "reference");
  await mkdir(packageDir);
  await mkdir(join(referenceDir, "images"), { recursive: true });
  const workload = generateConversation({ turns: turns - TIMED_TURNS, seed: 1 });
  const conversation: SavedConversation = workload.conversation;

  // Our archive: one save of the first N − 10 turns, then one save per turn.
  const { archive } = await openArchive(packageDir);
  let started = performance.now();
  await archive.save(conversation, workload.images);
  const bulkSaveMs = performance.now() - started;
  const saveTimes: number[] = [];
  const referenceTimes: number[] = [];
  const bytesWritten: number[] = [];
  // The physical reference is measured right after the save on odd turns (the same bytes) and
  // right before it on even turns (the file as it is, one turn shorter, and this turn's new
  // images), so that neither side always runs first after the other's writes.
  const reference = async (turn: number, newImages: readonly Uint8Array[]): Promise<number> => {
    const file = await readFile(join(packageDir, "agent", "conversation.json"));
    const begun = performance.now();
    await writeDurably(join(referenceDir, "conversation.json"), file);
    for (const [index, bytes] of newImages.entries()) {
      await writeDurably(join(referenceDir, "images", `${turn}-${index}.png`), bytes);
    }
    return performance.now() - begun;
  };
  for (let turn = turns - TIMED_TURNS; turn < turns; turn++) {
    const held = new Set(workload.images.keys());
    appendTurn(workload, turn);
    const newImages = [...workload.images]
      .filter(([sha256]) => !held.has(sha256))
      .map(([, bytes]) => bytes);
    if (turn % 2 === 0) referenceTimes.push(await reference(turn, newImages));
    started = performance.now();
    const result = await archive.save(conversation, workload.images);
    saveTimes.push(performance.now() - started);
    bytesWritten.push(result.bytesWritten);
    if (turn % 2 === 1) referenceTimes.push(await reference(turn, newImages));
  }

  // Unchanged re-save.
  const unchangedTimes: number[] = [];
  let unchangedBytes = 0;
  for (let round = 0; round < UNCHANGED_ROUNDS; round++) {
    started = performance.now();
    const result = await archive.save(conversation, workload.images);
    unchangedTimes.push(performance.now() - started);
    unchangedBytes += result.bytesWritten;
    if (result.outcome !== "unchanged") throw new Error(`re-save was ${result.outcome}`);
  }
  const diskBytes = [...(await filesUnder(join(packageDir, "agent"))).values()].reduce(
    (sum, size) => sum + size,
    0,
  );

  // Reopen in a fresh process, with its physical reference measured in that process.
  const reopened = JSON.parse(
    execFileSync(process.execPath, ["bin/run-ts.js", "bench/archive/reopen-child.ts", packageDir], {
      cwd: ROOT,
      encoding: "utf8",
      maxBuffer: 1 << 20,
    }),
  ) as { reopenMs: number; referenceMs: number; messages: number };
  if (reopened.messages !== conversation.history.length) throw new Error("reopen lost messages");

  // Baseline 1: JSON.stringify + writeFile (+ fsync) of the whole conversation at every turn.
  const baseline = generateConversation({ turns: turns - TIMED_TURNS, seed: 1 });
  const wholeFile = join(work, "whole.json");
  await writeDurably(wholeFile, JSON.stringify(baseline.conversation, mapsAsObjects));
  const wholeFileTimes: number[] = [];
  // Baseline 2: a JSON Lines file, one line per new message, appended (+ fsync) at every turn.
  const lines = join(work, "conversation.jsonl");
  await writeDurably(
    lines,
    baseline.conversation.history.map((message) => JSON.stringify(message)).join("\n") + "\n",
  );
  const jsonLinesTimes: number[] = [];
  for (let turn = turns - TIMED_TURNS; turn < turns; turn++) {
    const start = baseline.conversation.history.length;
    appendTurn(baseline, turn);
    started = performance.now();
    await writeDurably(wholeFile, JSON.stringify(baseline.conversation, mapsAsObjects));
    wholeFileTimes.push(performance.now() - started);
    started = performance.now();
    const added = baseline.conversation.history.slice(start);
    await writeDurably(
      lines,
      added.map((message) => JSON.stringify(message)).join("\n") + "\n",
      "a",
    );
    jsonLinesTimes.push(performance.now() - started);
  }
  await rm(work, { recursive: true, force: true });
  return {
    turns,
    bulkSaveMs,
    tenSavesMs: saveTimes.reduce((sum, value) => sum + value, 0),
    saveMs: mean(saveTimes),
    referenceSaveMs: mean(referenceTimes),
    medianSaveMs: median(saveTimes),
    medianReferenceSaveMs: median(referenceTimes),
    bytesPerSave: mean(bytesWritten),
    unchangedMs: median(unchangedTimes),
    unchangedBytes,
    reopenMs: reopened.reopenMs,
    referenceReopenMs: reopened.referenceMs,
    diskBytes,
    wholeFileMs: mean(wholeFileTimes),
    jsonLinesMs: mean(jsonLinesTimes),
  };
}

const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(0));
const ratio = (value: number, reference: number): string => `${(value / reference).toFixed(2)}×`;
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

const rows: Row[] = [];
for (const turns of sizes) rows.push(await measure(turns));

const header = [
  "N",
  "first N−10 turns, one save",
  "save per turn (mean of last 10)",
  "physical ref.",
  "ratio",
  "medians (ratio)",
  "bytes per save",
  "unchanged re-save",
  "reopen",
  "physical ref.",
  "ratio",
  "on disk",
  "JSON.stringify whole file",
  "JSON Lines append",
];
const table = [
  `| ${header.join(" | ")} |`,
  `| ${header.map(() => "---").join(" | ")} |`,
  ...rows.map(
    (row) =>
      `| ${[
        row.turns.toLocaleString("en-US"),
        `${ms(row.bulkSaveMs)} ms`,
        `${ms(row.saveMs)} ms (10 saves: ${ms(row.tenSavesMs)} ms)`,
        `${ms(row.referenceSaveMs)} ms`,
        ratio(row.saveMs, row.referenceSaveMs),
        `${ms(row.medianSaveMs)} / ${ms(row.medianReferenceSaveMs)} ms (${ratio(row.medianSaveMs, row.medianReferenceSaveMs)})`,
        mib(row.bytesPerSave),
        `${row.unchangedMs.toFixed(3)} ms, ${row.unchangedBytes} B`,
        `${ms(row.reopenMs)} ms`,
        `${ms(row.referenceReopenMs)} ms`,
        ratio(row.reopenMs, row.referenceReopenMs),
        mib(row.diskBytes),
        `${ms(row.wholeFileMs)} ms`,
        `${ms(row.jsonLinesMs)} ms`,
      ].join(" | ")} |`,
  ),
];
process.stdout.write(table.join("\n") + "\n");

const largest = rows[rows.length - 1];
if (largest !== undefined) {
  const goals = [
    [
      `save at N = ${largest.turns} ≤ 2× its physical reference`,
      largest.saveMs <= 2 * largest.referenceSaveMs,
    ],
    [
      `unchanged re-save writes 0 bytes and takes < 1 ms`,
      largest.unchangedBytes === 0 && largest.unchangedMs < 1,
    ],
    [`reopen ≤ 2× its physical reference`, largest.reopenMs <= 2 * largest.referenceReopenMs],
  ] as const;
  for (const [goal, met] of goals) process.stdout.write(`${met ? "met" : "NOT MET"}: ${goal}\n`);
}
process.stdout.write(
  `load average during the run: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(", ")} (${new Date().toISOString()})\n`,
);
