import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** What one phase of bench/interop/phase.ts printed. */
export interface PhaseResult {
  readonly phase: string;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly bytes: number;
  readonly files: number;
  readonly maxRssBytes: number;
  /** Package phases: the files each thread imported (the main thread's first). */
  readonly filesByThread?: readonly number[];
  /** Index phases: rows indexed, transactions, the longest one in ms. */
  readonly rows?: number;
  readonly transactions?: number;
  readonly longestMs?: number;
}

/** Runs one phase of bench/interop/phase.ts in a process of its own (its memory its own). */
export function runPhase(args: readonly string[]): PhaseResult {
  const result = spawnSync(process.execPath, ["bin/run-ts.js", "bench/interop/phase.ts", ...args], {
    cwd: root,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    throw new Error(`phase ${args[0] ?? ""} failed`);
  }
  return JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}") as PhaseResult;
}

/** The median of a list of figures (the mean of the middle two for an even count). */
export function median(list: readonly number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Removes a SQLite store's file and its WAL and shared-memory files. */
export function removeStore(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}
