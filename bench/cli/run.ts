/**
 * Start-up time of the `verbatim` command (issue 16's goal: `verbatim --help` and `verbatim
 * archive check <small package>` at most 2× `node -e 0`'s wall time, from the compiled
 * package). Runs `node -e 0`, `<command> --help` and `<command> archive check <package>` in
 * interleaved rounds (after warm-up runs), each a fresh process, and prints the median (p50)
 * and p90 wall time of each and the ratio of each median to `node -e 0`'s, measured in the same
 * run.
 *
 *   node bin/run-ts.js bench/cli/run.ts [--runs N] [--command "<program and arguments>"] [--package DIR]
 *
 * --command: how to start verbatim, split on spaces; `node` means this Node.js. Default
 * `node bin/verbatim.js`: in a checkout that runs the TypeScript sources through tsx; point it
 * at the compiled bin to measure the package (e.g. `--command "node node_modules/.bin/verbatim"`
 * in an app that installed it). --package: default test/fixtures/packages/Poster.silverpoint (a
 * readable conversation of 5 messages).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("../..", import.meta.url));
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "20" },
    command: { type: "string", default: "node bin/verbatim.js" },
    package: { type: "string", default: "test/fixtures/packages/Poster.silverpoint" },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`bench/cli: --runs must be a whole number ≥ 1, not "${values.runs}"\n`);
  process.exit(2);
}
const words = values.command.split(" ").filter((word) => word !== "");
const program = words[0] === "node" ? process.execPath : (words[0] ?? process.execPath);
const prefix = words.slice(1);

interface Case {
  readonly name: string;
  readonly program: string;
  readonly args: readonly string[];
  readonly times: number[];
}

/**
 * The floor of any command that loads zod: a fresh Node that only imports zod, with the compile
 * cache the bins enable. `archive check` of a valid package no longer loads it (format 1 is
 * checked by hand, format/validate.ts); the row shows what that saves.
 */
const zodFloor = [
  'const m = await import("node:module"); m.default.enableCompileCache?.();',
  `await import(${JSON.stringify(new URL("../../node_modules/zod/index.js", import.meta.url).href)});`,
].join(" ");

const cases: Case[] = [
  { name: "node -e 0 (baseline)", program: process.execPath, args: ["-e", "0"], times: [] },
  {
    name: "node: import zod only (the floor of a zod-validating command)",
    program: process.execPath,
    args: ["--input-type=module", "-e", zodFloor],
    times: [],
  },
  { name: `${values.command} --help`, program, args: [...prefix, "--help"], times: [] },
  {
    name: `${values.command} archive check <package>`,
    program,
    args: [...prefix, "archive", "check", values.package],
    times: [],
  },
];

function once(entry: Case): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(entry.program, entry.args, {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) {
    process.stderr.write(
      `bench/cli: "${entry.name}" exited ${String(result.status)}: ${result.stderr.toString()}\n`,
    );
    process.exit(1);
  }
  return elapsed;
}

function percentile(times: readonly number[], fraction: number): number {
  const sorted = [...times].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

for (const entry of cases) for (let warm = 0; warm < 2; warm++) once(entry);
for (let round = 0; round < runs; round++) {
  // A different case first each round, so that none always runs right after another.
  for (let index = 0; index < cases.length; index++) {
    const entry = cases[(round + index) % cases.length];
    if (entry !== undefined) entry.times.push(once(entry));
  }
}

const baseline = percentile(cases[0]?.times ?? [], 0.5);
process.stdout.write(
  `bench/cli: ${runs} interleaved runs each (after 2 warm-up runs), wall time of a fresh process; Node ${process.version}\n\n`,
);
process.stdout.write(
  "| command | p50 ms | p90 ms | p50 ÷ node -e 0 |\n| --- | ---: | ---: | ---: |\n",
);
for (const entry of cases) {
  const median = percentile(entry.times, 0.5);
  process.stdout.write(
    `| \`${entry.name}\` | ${median.toFixed(1)} | ${percentile(entry.times, 0.9).toFixed(1)} | ${(median / baseline).toFixed(2)}× |\n`,
  );
}
process.stdout.write(
  "\nGoal (issue 16, from the compiled package): --help and archive check ≤ 2.00×.\n",
);
