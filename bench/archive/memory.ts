// The archive's peak memory on a large conversation.json (goal: open + save at most 3× the
// file's size). A seeded conversation (bench/workload/conversation.ts, no images) of about
// --megabytes MB is saved once; then each case runs in a fresh process that prints its peak
// resident set size (VmHWM on Linux, see memory-child.ts), shown as a ratio to the file's size,
// beside the floor of reading the text and JSON.parse alone, and the empty process.
//
// The cases run as JavaScript compiled from the sources (tsc without type checking) on plain
// node, as the package runs for its users (under the TypeScript loader the empty process alone
// takes about 120 MB). Each case runs three times: with Node's defaults; with V8's young
// generation capped (--max-semi-space-size=16, an option an embedding application sets); and as
// the `verbatim` command runs it (its young generation kept at its starting size by a setting
// applied at run time, cli/young-generation.ts). By default V8 grows the young generation to its
// largest size (134 MB on this 24 GB machine) while a large file is read, whatever reads it.
//
// The default size is the issue's own case, a 200 MB conversation.json (issue 15: "costs 714 MB
// RSS to check and 1.35 GB to resave"). The ratio to the file's size includes what does not grow
// with the file (the empty process, about 73 MB, and by default the young generation, about
// 134 MB), so it is higher for smaller files: run --megabytes 100 to see it (docs/archive.md).
//
//   node bin/run-ts.js bench/archive/memory.ts [--megabytes 200]
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { generateConversation } from "../workload/conversation.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Bytes of conversation.json per turn of the workload without images (measured). */
const BYTES_PER_TURN = 10_900;

const { values } = parseArgs({ options: { megabytes: { type: "string", default: "200" } } });
const megabytes = Number(values.megabytes);
if (!Number.isFinite(megabytes) || megabytes <= 0) {
  throw new Error(`--megabytes must be a positive number, got ${values.megabytes}`);
}

const work = await mkdtemp(join(tmpdir(), "verbatim-bench-archive-memory-"));
const packageDir = join(work, "Poster.silverpoint");
await mkdir(packageDir);
{
  const turns = Math.ceil((megabytes * 1e6) / BYTES_PER_TURN);
  const workload = generateConversation({ turns, seed: 7, imageEvery: 0 });
  const { archive } = await openArchive(packageDir);
  await archive.save(workload.conversation, workload.images);
}
const fileBytes = (await stat(join(packageDir, "agent", "conversation.json"))).size;

const compiled = join(work, "compiled");
execFileSync(
  process.execPath,
  [
    join(ROOT, "node_modules", "typescript", "bin", "tsc"),
    "bench/archive/memory-child.ts",
    ...["--outDir", compiled, "--rootDir", ".", "--module", "nodenext"],
    ...["--moduleResolution", "nodenext", "--target", "es2023", "--types", "node"],
    ...["--skipLibCheck", "--noCheck"],
  ],
  { cwd: ROOT, stdio: "inherit" },
);
await symlink(join(ROOT, "node_modules"), join(compiled, "node_modules"));
const child = join(compiled, "bench", "archive", "memory-child.js");

const CASES = [
  "baseline",
  "parse",
  "decode",
  "open",
  "open+unchanged save",
  "open+save of a change",
] as const;
const CONFIGURATIONS = [
  { name: "Node's defaults", flags: [], childArgs: [] },
  {
    name: "young generation capped (--max-semi-space-size=16)",
    flags: ["--max-semi-space-size=16"],
    childArgs: [],
  },
  {
    name: "as the verbatim command (young generation kept at its starting size)",
    flags: [],
    childArgs: ["--as-command"],
  },
] as const;

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
const ratio = (bytes: number): string => `${(bytes / fileBytes).toFixed(2)}×`;
const lines = [`conversation.json: ${mb(fileBytes)} (seeded, no images)`];
for (const configuration of CONFIGURATIONS) {
  const results = new Map<string, { outcome: string; maxRssBytes: number }>();
  for (const which of CASES) {
    const line = execFileSync(
      process.execPath,
      [...configuration.flags, child, which, packageDir, ...configuration.childArgs],
      {
        cwd: ROOT,
        encoding: "utf8",
        maxBuffer: 1 << 20,
      },
    );
    results.set(which, JSON.parse(line) as { outcome: string; maxRssBytes: number });
  }
  const baseline = results.get("baseline")?.maxRssBytes ?? 0;
  lines.push(
    "",
    `${configuration.name}:`,
    "",
    "| case (fresh process) | outcome | peak RSS | ÷ file size | above the empty process, ÷ file size |",
    "| --- | --- | --- | --- | --- |",
  );
  for (const [which, result] of results) {
    lines.push(
      `| ${which} | ${result.outcome} | ${mb(result.maxRssBytes)} | ${ratio(result.maxRssBytes)} | ${which === "baseline" ? "" : ratio(result.maxRssBytes - baseline)} |`,
    );
  }
  const worst = Math.max(
    results.get("open")?.maxRssBytes ?? 0,
    results.get("open+unchanged save")?.maxRssBytes ?? 0,
    results.get("open+save of a change")?.maxRssBytes ?? 0,
  );
  const floor = results.get("parse")?.maxRssBytes ?? 0;
  lines.push(
    "",
    `${worst <= 3 * fileBytes ? "met" : "NOT MET"}: peak RSS of open + save ≤ 3× the file (${ratio(worst)}; the floor, read + JSON.parse alone: ${ratio(floor)})`,
  );
}
await rm(work, { recursive: true, force: true });
process.stdout.write(lines.join("\n") + "\n");
