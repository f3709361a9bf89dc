/**
 * Import throughput (issue 19's goal: at least 0.3× the speed of reading the same files with
 * JSON.parse line by line, measured in the same run; memory bounded by the largest session,
 * not the folder). Generates a seeded folder of sessions in Claude Code's and Codex's shapes,
 * then, each in a fresh process: the JSON.parse baseline, the importer's own work (read and
 * convert, no writes), the import into one package per session (durable writes through the
 * archive) with one thread (`--jobs 1`) and with `--jobs N` threads (the main thread and N - 1
 * worker threads taking whole files, as `verbatim import … --jobs N` does; the CPU time then
 * adds up every thread's, so its ratio is worse than one thread's while the wall-clock one is
 * better), and the idempotent re-run with N threads, which writes nothing; into one SQLite store, the import
 * with `--jobs 1` (one thread) and with `--jobs N` (from 2, SQLite's inserts on a writer thread
 * of their own while the main thread reads, converts and plans the next batch; the command
 * returns with its rows pending for the search index) and, as rows of their own,
 * indexing them afterwards at once (`verbatim db index`) and at a running server's pace (on a
 * copy of the store, with its longest transaction), and the import plus the index at once beside
 * the baseline (the faster of two runs, after the generated files are synced to the disk).
 * Prints MB/s, the ratio to the baseline, and peak memory
 * beside the largest session's size; and the CPU time of each phase beside the baseline's (on a
 * loaded machine the wall-clock ratio measures the load as much as the code; the CPU ratio
 * less so, though it leaves out the time spent waiting for the disk).
 *
 *   node bin/run-ts.js bench/interop/run.ts [--sessions 500] [--megabytes 40] [--seed 19] [--jobs N]
 *
 * `--jobs` defaults to the import's own default (the machine's available parallelism, at most 4).
 *
 * The issue's full size is `--megabytes 1000` (1 GB); the default runs in about a minute.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { defaultImportJobs } from "../../packages/library/src/interop/source-names.js";
import { generateCorpus } from "./generator.js";
import { removeStore, runPhase, type PhaseResult } from "./run-phase.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "500" },
    megabytes: { type: "string", default: "40" },
    seed: { type: "string", default: "19" },
    jobs: { type: "string", default: String(defaultImportJobs()) },
  },
});
const sessions = Number(values.sessions);
const megabytes = Number(values.megabytes);
const seed = Number(values.seed);
const jobs = Number(values.jobs);
if (
  !Number.isInteger(sessions) ||
  sessions < 2 ||
  !(megabytes > 0) ||
  !Number.isInteger(seed) ||
  !Number.isInteger(jobs) ||
  jobs < 1
) {
  process.stderr.write(
    "bench/interop: --sessions is a whole number ≥ 2, --megabytes a positive number, --seed a whole number, --jobs a whole number ≥ 1\n",
  );
  process.exit(2);
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-interop-"));
try {
  const corpus = generateCorpus(join(folder, "sources"), sessions, megabytes * 1e6, seed);
  // The generated files written out to the disk before any phase reads them: otherwise the
  // kernel's write-back of a fresh gigabyte runs during the first phases (the Claude Code
  // baseline took 2.49 s in one run and 6.40-6.71 s in two others before this).
  spawnSync("sync");
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
  process.stdout.write(
    `${sessions} sessions, ${mb(corpus.bytes)} MB in all, largest ${mb(corpus.largestBytes)} MB (seed ${seed}); imports into packages with --jobs 1 and --jobs ${jobs}\n`,
  );
  const rows: { name: string; result: PhaseResult; baseline: PhaseResult }[] = [];
  for (const [source, sourceFolder] of [
    ["claude-code", corpus.claudeFolder],
    ["codex", corpus.codexFolder],
  ] as const) {
    const into = join(folder, `packages-${source}`);
    const intoOne = join(folder, `packages-${source}-one-thread`);
    // The faster of two runs of the baseline (the files in the page cache, nothing else
    // reading or writing): the floor the goal is measured against.
    const baseline = [
      runPhase(["baseline", sourceFolder]),
      runPhase(["baseline", sourceFolder]),
    ].sort((a, b) => a.seconds - b.seconds)[0] as PhaseResult;
    rows.push({
      name: `JSON.parse line by line (${source} files, baseline)`,
      result: baseline,
      baseline,
    });
    rows.push({
      name: `read and convert ${source} (no writes)`,
      result: runPhase([`${source}-read`, sourceFolder]),
      baseline,
    });
    rows.push({
      name: `import ${source} into packages (--jobs 1)`,
      result: runPhase([source, sourceFolder, intoOne, "1"]),
      baseline,
    });
    rows.push({
      name: `import ${source} into packages (--jobs ${jobs})`,
      result: runPhase([source, sourceFolder, into, String(jobs)]),
      baseline,
    });
    rows.push({
      name: `import ${source} again (idempotent re-run, --jobs ${jobs})`,
      result: runPhase([source, sourceFolder, into, String(jobs)]),
      baseline,
    });
    // Into the store in one thread (--jobs 1), then with the default jobs (a writer thread
    // beside the main one from two on); the index phases below use the second's store.
    const storeOne = join(folder, `store-${source}-one-thread.sqlite`);
    rows.push({
      name: `import ${source} into one SQLite store, --jobs 1 (returns, rows pending for search)`,
      result: runPhase([`${source}-sqlite`, sourceFolder, storeOne, "1"]),
      baseline,
    });
    removeStore(storeOne);
    const store = join(folder, `store-${source}.sqlite`);
    const imported = runPhase([`${source}-sqlite`, sourceFolder, store, String(jobs)]);
    rows.push({
      name: `import ${source} into one SQLite store, --jobs ${jobs} (returns, rows pending for search)`,
      result: imported,
      baseline,
    });
    // The same pending rows, indexed at a server's pace on a copy of the store.
    const copy = join(folder, `store-${source}-copy.sqlite`);
    for (const suffix of ["", "-wal"])
      if (existsSync(`${store}${suffix}`)) copyFileSync(`${store}${suffix}`, `${copy}${suffix}`);
    const indexed = runPhase([`${source}-sqlite-index`, sourceFolder, store]);
    rows.push({
      name: `index ${source}'s pending rows for search afterwards (db index)`,
      result: indexed,
      baseline,
    });
    rows.push({
      name: `import ${source} into the store + index afterwards`,
      result: {
        ...imported,
        phase: "import + index",
        seconds: imported.seconds + indexed.seconds,
        cpuSeconds: imported.cpuSeconds + indexed.cpuSeconds,
        maxRssBytes: Math.max(imported.maxRssBytes, indexed.maxRssBytes),
      },
      baseline,
    });
    rows.push({
      name: `index ${source}'s pending rows at a server's pace (background catch-up)`,
      result: runPhase([`${source}-sqlite-catch-up`, sourceFolder, copy]),
      baseline,
    });
    rows.push({
      name: `import ${source} into the store again (idempotent, --jobs ${jobs})`,
      result: runPhase([`${source}-sqlite`, sourceFolder, store, String(jobs)]),
      baseline,
    });
  }
  process.stdout.write(
    "| phase | files | MB | seconds | MB/s | × baseline | CPU s | × baseline CPU | peak RSS MB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
  );
  for (const { name, result, baseline } of rows) {
    const rate = result.bytes / 1e6 / result.seconds;
    const baseRate = baseline.bytes / 1e6 / baseline.seconds;
    process.stdout.write(
      `| ${name} | ${result.files} | ${mb(result.bytes)} | ${result.seconds.toFixed(2)} | ${rate.toFixed(1)} | ${(rate / baseRate).toFixed(2)} | ${result.cpuSeconds.toFixed(2)} | ${(baseline.cpuSeconds / result.cpuSeconds).toFixed(2)} | ${mb(result.maxRssBytes)} |\n`,
    );
  }
  for (const { name, result } of rows) {
    if (result.filesByThread === undefined || result.filesByThread.length < 2) continue;
    process.stdout.write(
      `${name}: files per thread ${result.filesByThread.join(" + ")} (the main thread's first)\n`,
    );
  }
  for (const { name, result } of rows) {
    if (result.longestMs === undefined) continue;
    process.stdout.write(
      `${name}: ${result.rows ?? 0} rows in ${result.transactions ?? 0} transaction(s), the longest ${result.longestMs.toFixed(1)} ms\n`,
    );
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
