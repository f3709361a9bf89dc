/**
 * One measured phase of bench/interop, in a process of its own so that its peak memory is its
 * own: `baseline <folder>` reads every file and JSON.parses it line by line; `claude-code-read`
 * and `codex-read <folder>` read and convert every file without writing; `claude-code <folder>
 * <into>` and `codex <folder> <into>` import it into packages; `claude-code-sqlite` and
 * `codex-sqlite <folder> <file> [jobs]` run `verbatim import … --into sqlite:<file> --jobs
 * <jobs>` (default 1: one thread; from 2, a writer thread beside the main one; one chain per
 * conversation, durable when it returns, its rows pending for the search index, which search
 * finds meanwhile; the database migrated before the clock starts); `claude-code-sqlite-index`
 * and `codex-sqlite-index <folder> <file>` index the rows the import left pending at once
 * (`verbatim db index`: catchUpSearchIndex in 20,000-row transactions), and
 * `…-sqlite-catch-up <folder> <file>` as a running server does (SERVER_CATCH_UP_PACE, a turn of
 * the event loop between transactions), with the longest transaction. Prints one JSON line:
 * seconds, CPU seconds (this process's user and system time, worker threads included, and the
 * main thread's alone: on a free second core the critical path of a threaded phase), bytes
 * read, peak resident memory (and for the index phases the rows indexed and the longest
 * transaction in ms; for the package phases the files each thread imported).
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  importConversationFile,
  importIntoPackages,
} from "../../packages/library/src/interop/index.js";

function files(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    const full = join(folder, name);
    if (statSync(full).isDirectory()) found.push(...files(full));
    else if (name.endsWith(".jsonl")) found.push(full);
  }
  return found.sort();
}

const [phase = "", folder = "", into = "", jobsText = "1"] = process.argv.slice(2);
const indexingPhase = (name: string): boolean =>
  name.endsWith("-sqlite-index") || name.endsWith("-sqlite-catch-up");
const list = files(folder);
let bytes = 0;
for (const file of list) bytes += statSync(file).size;
// The store phases run `verbatim import … --into sqlite:<file>` itself (the database created
// and migrated before the clock starts); the server's modules are loaded for them only (the
// other phases' memory is their own).
if (phase.endsWith("-sqlite")) {
  const { openDatabase } = await import("../../packages/server/src/store/database.js");
  const { migrateDatabase } = await import("../../packages/server/src/store/migrate.js");
  const database = await openDatabase({ dialect: "sqlite", path: into }, { poolSize: 1 });
  await migrateDatabase(database);
  await database.close();
}
const cli = phase.endsWith("-sqlite")
  ? await import("../../packages/library/src/cli/index.js")
  : undefined;
// The command's modules loaded before the clock, as for the other phases.
if (cli !== undefined) {
  const { loadServerCommand } = await import("../../packages/library/src/cli/server-commands.js");
  await loadServerCommand("import database");
}
// The index phases open the imported store before the clock starts.
const indexing = indexingPhase(phase);
const store = indexing
  ? {
      ...(await import("../../packages/server/src/store/search-deferral.js")),
      database: await (
        await import("../../packages/server/src/store/database.js")
      ).openDatabase({ dialect: "sqlite", path: into }, { poolSize: 1 }),
    }
  : undefined;
let caughtUp: { rows: number; longestMs: number; transactions: number } | undefined;
let filesByThread: readonly number[] | undefined;
const start = process.hrtime.bigint();
const cpuStart = process.cpuUsage();
// process.threadCpuUsage (Node 23.9+): this thread's CPU time (not in @types/node yet); on an
// older Node the main thread's figure is left out (null).
const threadCpuUsage = (
  process as NodeJS.Process & { threadCpuUsage?(since?: NodeJS.CpuUsage): NodeJS.CpuUsage }
).threadCpuUsage?.bind(process);
const mainCpuStart = threadCpuUsage?.();
if (store !== undefined) {
  caughtUp = await store.catchUpSearchIndex(
    store.database,
    phase.endsWith("-sqlite-index")
      ? store.CATCH_UP_AT_ONCE
      : {
          ...store.SERVER_CATCH_UP_PACE,
          pause: () => new Promise((resolve) => setImmediate(resolve)),
        },
  );
  if (caughtUp.rows === 0) throw new Error("no pending row indexed");
  if ((await store.pendingSearchDeferrals(store.database)) > 0)
    throw new Error("deferrals left after the catch-up");
} else if (cli !== undefined) {
  const source = phase === "codex-sqlite" ? "codex" : "claude-code";
  const io = cli.bufferIO();
  const code = await cli.main(
    [
      "import",
      source,
      folder,
      "--into",
      `sqlite:${into}`,
      "--subject",
      "bench",
      "--json",
      "--jobs",
      jobsText,
    ],
    io,
  );
  if (code !== 0) throw new Error(`verbatim import exited with ${code}: ${io.err()}`);
} else if (phase === "baseline") {
  let lines = 0;
  for (const file of list) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line === "") continue;
      JSON.parse(line);
      lines++;
    }
  }
  if (lines === 0) throw new Error("no lines read");
} else if (phase === "claude-code-read" || phase === "codex-read") {
  // The importer's own work alone: read, parse and convert every file, write nothing.
  const source = phase === "codex-read" ? "codex" : "claude-code";
  let conversations = 0;
  for (const file of list) {
    conversations += (await importConversationFile(source, file, readFileSync(file))).conversations
      .length;
  }
  if (conversations === 0) throw new Error("no conversation read");
} else if (phase === "claude-code" || phase === "codex") {
  const report = await importIntoPackages({
    source: phase,
    files: list,
    into,
    jobs: Number(jobsText),
    onThreads: (counts) => {
      filesByThread = counts;
    },
  });
  if (report.totals.refused > 0) throw new Error(`${report.totals.refused} refused`);
} else {
  throw new Error(`unknown phase ${phase}`);
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const cpu = process.cpuUsage(cpuStart);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const mainCpu = threadCpuUsage?.(mainCpuStart);
const mainThreadCpuSeconds = mainCpu === undefined ? null : (mainCpu.user + mainCpu.system) / 1e6;
await store?.database.close();
process.stdout.write(
  `${JSON.stringify({ phase, seconds, cpuSeconds, mainThreadCpuSeconds, bytes, files: list.length, maxRssBytes: process.resourceUsage().maxRSS * 1024, ...(caughtUp === undefined ? {} : { rows: caughtUp.rows, transactions: caughtUp.transactions, longestMs: caughtUp.longestMs }), ...(filesByThread === undefined ? {} : { filesByThread }) })}\n`,
);
