// The goal "Unchanged re-save after reopening": a save after opening, with nothing changed,
// must take < 1 ms and write 0 bytes at every N, however soon it comes: the open finds whether
// the file is canonical while decoding it (issue 31), so nothing is left to wait for. Measured,
// for each N, in the same run:
//   - the unchanged save at once after opening (no pause between the two);
//   - the full save it replaces: the same conversation given as new objects, which the archive
//     must encode whole and compare with the file (what the first save after reopening cost
//     before the archive knew the file was canonical);
//   - the physical reference of a save: writing the file's bytes (+ fsync);
//   - the open, against the physical reference of reading: conversation.json read and given to
//     JSON.parse, every image file read and hashed (SHA-256).
//
//   node bin/run-ts.js bench/archive/reopen-resave.ts [--turns 100,1000,5000] [--rounds 5]
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, open, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openArchive } from "../../packages/library/src/archive/index.js";
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

/** Reading what an open reads, with nothing else: JSON.parse, and SHA-256 of every image. */
async function readReference(packageDir: string): Promise<void> {
  JSON.parse(await readFile(join(packageDir, "agent", "conversation.json"), "utf8"));
  const folder = join(packageDir, "agent", "images");
  for (const name of await readdir(folder)) {
    createHash("sha256")
      .update(await readFile(join(folder, name)))
      .digest("hex");
  }
}

interface Row {
  turns: number;
  fileBytes: number;
  atOnceMs: number;
  atOnceBytes: number;
  fullSaveMs: number;
  physicalMs: number;
  openMs: number;
  readMs: number;
}

async function measure(turns: number): Promise<Row> {
  const work = await mkdtemp(join(tmpdir(), "verbatim-bench-reopen-resave-"));
  const packageDir = join(work, "Poster.silverpoint");
  await mkdir(packageDir);
  const workload = generateConversation({ turns, seed: 3 });
  await (await openArchive(packageDir)).archive.save(workload.conversation, workload.images);
  const file = join(packageDir, "agent", "conversation.json");
  const bytes = await readFile(file);

  const atOnce: number[] = [];
  const full: number[] = [];
  const physical: number[] = [];
  const opens: number[] = [];
  const reads: number[] = [];
  let atOnceBytes = 0;
  for (let round = 0; round < rounds; round++) {
    let started = performance.now();
    await readReference(packageDir);
    reads.push(performance.now() - started);

    started = performance.now();
    const opened = await openArchive(packageDir);
    opens.push(performance.now() - started);
    started = performance.now();
    const result = await opened.archive.save(opened.conversation, opened.images);
    atOnce.push(performance.now() - started);
    atOnceBytes += result.bytesWritten;
    if (result.outcome !== "unchanged") throw new Error(`unchanged save was ${result.outcome}`);

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
    atOnceMs: median(atOnce),
    atOnceBytes,
    fullSaveMs: median(full),
    physicalMs: median(physical),
    openMs: median(opens),
    readMs: median(reads),
  };
}

const rows: Row[] = [];
for (const turns of sizes) rows.push(await measure(turns));

const ms = (value: number): string => (value < 10 ? value.toFixed(3) : value.toFixed(0));
const lines = [
  `medians of ${rounds} rounds`,
  "",
  "| N | conversation.json | unchanged save at once after open | full save (before) | ratio | physical write | open | read + JSON.parse + SHA-256 of images | ratio |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (row) =>
      `| ${row.turns.toLocaleString("en-US")} | ${(row.fileBytes / 1e6).toFixed(1)} MB | ${ms(row.atOnceMs)} ms, ${row.atOnceBytes} B | ${ms(row.fullSaveMs)} ms | ${(row.atOnceMs / row.fullSaveMs).toFixed(4)}× | ${ms(row.physicalMs)} ms | ${ms(row.openMs)} ms | ${ms(row.readMs)} ms | ${(row.openMs / row.readMs).toFixed(2)}× |`,
  ),
  "",
];
const met = rows.every((row) => row.atOnceMs < 1 && row.atOnceBytes === 0);
lines.push(
  `${met ? "met" : "NOT MET"}: an unchanged save at once after reopening takes < 1 ms and writes 0 bytes at every N`,
);
process.stdout.write(lines.join("\n") + "\n");
