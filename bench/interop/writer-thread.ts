/**
 * The import into one SQLite store with and without its writer thread (issue 19): generates a
 * seeded folder of sessions (bench/interop's generator), then imports one source's files with
 * `--jobs 1` and `--jobs 2` taking turns (`--runs` each, a fresh store each time, each in a
 * process of its own through bench/interop/phase.ts), and the JSON.parse baseline twice. Prints
 * each run, then the medians, the ratio of the two and each one's ratio to the faster baseline.
 * The threshold of the writer thread (gateway/import/chains.ts, WRITER_THREAD_MIN_BYTES) and its
 * batch size were chosen with this comparison at several sizes (docs/interop.md). From the
 * TypeScript sources the thread loads in ~1 s instead of ~0.2 s compiled, so small sizes fare
 * worse here than installed.
 *
 *   node bin/run-ts.js bench/interop/writer-thread.ts [--megabytes 200] [--source codex|claude-code] [--runs 3]
 *
 * `--megabytes` is the generated folder in all (half of it in each source's shape).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateCorpus } from "./generator.js";
import { median, removeStore, runPhase } from "./run-phase.js";

const { values } = parseArgs({
  options: {
    megabytes: { type: "string", default: "200" },
    source: { type: "string", default: "codex" },
    runs: { type: "string", default: "3" },
  },
});
const megabytes = Number(values.megabytes);
const runs = Number(values.runs);
const source = values.source;
if (
  !(megabytes > 0) ||
  !Number.isInteger(runs) ||
  runs < 1 ||
  (source !== "codex" && source !== "claude-code")
) {
  process.stderr.write(
    "bench/interop/writer-thread: --megabytes is a positive number, --source codex or claude-code, --runs a whole number ≥ 1\n",
  );
  process.exit(2);
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-writer-thread-"));
try {
  const corpus = generateCorpus(join(folder, "sources"), 500, megabytes * 1e6, 19);
  spawnSync("sync");
  const files = source === "codex" ? corpus.codexFolder : corpus.claudeFolder;
  const baseline = Math.min(
    runPhase(["baseline", files]).seconds,
    runPhase(["baseline", files]).seconds,
  );
  const seconds: Record<"1" | "2", number[]> = { "1": [], "2": [] };
  let bytes = 0;
  for (let run = 0; run < runs; run++) {
    for (const jobs of ["1", "2"] as const) {
      const store = join(folder, `store-${run}-${jobs}.sqlite`);
      const result = runPhase([`${source}-sqlite`, files, store, jobs]);
      removeStore(store);
      bytes = result.bytes;
      seconds[jobs].push(result.seconds);
      process.stdout.write(
        `--jobs ${jobs}: ${result.seconds.toFixed(2)} s, ${result.cpuSeconds.toFixed(2)} s CPU, ${(result.maxRssBytes / 1e6).toFixed(0)} MB peak\n`,
      );
    }
  }
  const one = median(seconds["1"]);
  const two = median(seconds["2"]);
  process.stdout.write(
    `${source}, ${(bytes / 1e6).toFixed(1)} MB, baseline (JSON.parse, faster of 2) ${baseline.toFixed(2)} s\n` +
      `median --jobs 1 ${one.toFixed(2)} s (${(baseline / one).toFixed(2)}x baseline), --jobs 2 ${two.toFixed(2)} s (${(baseline / two).toFixed(2)}x baseline): the writer thread ${(one / two).toFixed(2)}x as fast\n`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
