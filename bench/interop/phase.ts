/**
 * One measured phase of bench/interop, in a process of its own so that its peak memory is its
 * own: `baseline <folder>` reads every file and JSON.parses it line by line; `claude-code-read`
 * and `codex-read <folder>` read and convert every file without writing; `claude-code <folder>
 * <into>` and `codex <folder> <into>` import it into packages; `claude-code-sqlite` and
 * `codex-sqlite <folder> <file>` import it into one SQLite store (one chain per conversation,
 * the database migrated before the clock starts). Prints one JSON line:
 * seconds, bytes read, peak resident memory.
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

const [phase = "", folder = "", into = ""] = process.argv.slice(2);
const list = files(folder);
let bytes = 0;
for (const file of list) bytes += statSync(file).size;
// The server's modules are loaded for the store phases only (the others' memory is their own).
const server = phase.endsWith("-sqlite")
  ? {
      ...(await import("../../packages/server/src/cli/commands/import-database.js")),
      ...(await import("../../packages/server/src/store/deferred-durability.js")),
      ...(await import("../../packages/server/src/store/database.js")),
      ...(await import("../../packages/server/src/store/migrate.js")),
    }
  : undefined;
const sqlite = await server?.openDatabase({ dialect: "sqlite", path: into }, { poolSize: 1 });
if (sqlite !== undefined) await server?.migrateDatabase(sqlite);
const start = process.hrtime.bigint();
if (sqlite !== undefined && server !== undefined) {
  // What `verbatim import … --into sqlite:<file>` runs, durable when it returns.
  const source = phase === "codex-sqlite" ? "codex" : "claude-code";
  const durability = await server.deferDurability(sqlite);
  const report = await server.importChainsIntoDatabase(sqlite, into, source, "bench", list);
  await durability.finish();
  if (report.conversations.some((entry) => entry.outcome === "refused"))
    throw new Error("a conversation was refused");
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
  const report = await importIntoPackages({ source: phase, files: list, into });
  if (report.totals.refused > 0) throw new Error(`${report.totals.refused} refused`);
} else {
  throw new Error(`unknown phase ${phase}`);
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
await sqlite?.close();
process.stdout.write(
  `${JSON.stringify({ phase, seconds, bytes, files: list.length, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`,
);
