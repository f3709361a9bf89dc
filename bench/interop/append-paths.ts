/**
 * The two write paths of an import into the store, on the same conversations: the gateway's
 * `appendMessages` (gateway/import/chains.ts, `appendImportedChain`: one write per run of turns,
 * each checked, fingerprinted and committed as a caller's append is) and the import's own rows
 * (`appendImportedChainRows` through `ImportedChainRows`: several conversations a transaction,
 * multi-row inserts). Both sit behind one interface (the `same`/`append` pair of
 * `appendChainWith`) and one case table (test/interop/import-rows.test.ts compares every row
 * they write). This measures what the second path is worth: it generates a seeded folder of
 * sessions (bench/interop's generator), reads its conversations once (timed: the part of an
 * import both paths share), then imports them into a fresh SQLite store through each path in
 * turn (`--runs` each, no writer thread), and prints each run, the medians, the ratio of the
 * writes and the share of the whole import's time the import's own rows save.
 *
 *   node bin/run-ts.js bench/interop/append-paths.ts [--megabytes 20] [--source codex|claude-code] [--runs 3] [--pg]
 *
 * `--pg` measures on the PostgreSQL of VERBATIM_PG_URL (a fresh schema each run) instead.
 * Each store is a fresh one of test/support/databases.ts, migrated before the clock starts.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  importConversationFile,
  type ImportedConversation,
} from "../../packages/library/src/interop/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { ImportedChainRows } from "../../packages/server/src/gateway/import/chain-rows.js";
import { SubagentLinks } from "../../packages/server/src/gateway/import/chain-links.js";
import {
  appendImportedChain,
  appendImportedChainRows,
  type ChainImport,
} from "../../packages/server/src/gateway/import/chains.js";
import { generateCorpus } from "./generator.js";
import { median } from "./run-phase.js";
import { freshDatabase } from "../../test/support/databases.js";

const { values } = parseArgs({
  options: {
    megabytes: { type: "string", default: "20" },
    source: { type: "string", default: "codex" },
    runs: { type: "string", default: "3" },
    pg: { type: "boolean", default: false },
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
    "bench/interop/append-paths: --megabytes is a positive number, --source codex or claude-code, --runs a whole number ≥ 1\n",
  );
  process.exit(2);
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder)
    .map((name) => join(folder, name))
    .flatMap((path) => (statSync(path).isDirectory() ? filesUnder(path) : [path]))
    .sort();
}

type Path = "gateway" | "rows";

/** Seconds to import every conversation through `path` into a fresh store. */
async function importThrough(
  path: Path,
  conversations: readonly ImportedConversation[],
): Promise<number> {
  // SQLite needs no VERBATIM_PG_URL; PostgreSQL takes it from the environment.
  const fresh = await freshDatabase(values.pg ? "postgres" : "sqlite");
  const database = fresh.database;
  try {
    const subject = "bench";
    const links = new SubagentLinks();
    const started = performance.now();
    if (path === "gateway") {
      const store = new GatewayMessageStore(database);
      for (const imported of conversations) {
        const outcome: ChainImport = await appendImportedChain(
          store,
          subject,
          imported,
          store.now(),
          links.metadataFor(imported),
        );
        links.remember(imported, outcome.conversationId);
      }
    } else {
      const rows = new ImportedChainRows(database, subject, { writerThread: false });
      try {
        for (const imported of conversations) {
          const outcome = await appendImportedChainRows(
            rows,
            imported,
            links.metadataFor(imported),
          );
          links.remember(imported, outcome.conversationId);
        }
        await rows.flush();
      } finally {
        await rows.close();
      }
    }
    return (performance.now() - started) / 1000;
  } finally {
    await fresh.cleanup();
  }
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-append-paths-"));
try {
  const corpus = generateCorpus(
    join(folder, "sources"),
    Math.max(10, Math.round(megabytes * 2.5)),
    megabytes * 1e6,
    32,
  );
  const files = filesUnder(source === "codex" ? corpus.codexFolder : corpus.claudeFolder);
  const conversations: ImportedConversation[] = [];
  let bytes = 0;
  let messages = 0;
  const readStarted = performance.now();
  for (const file of files) {
    const content = readFileSync(file);
    bytes += content.length;
    for (const imported of (await importConversationFile(source, file, content)).conversations) {
      conversations.push(imported);
      messages += imported.conversation.history.length;
    }
  }
  const readSeconds = (performance.now() - readStarted) / 1000;
  process.stdout.write(
    `${source}: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${conversations.length} conversations, ${messages} messages, into ${values.pg ? "PostgreSQL" : "SQLite"}\n`,
  );
  const seconds: Record<Path, number[]> = { gateway: [], rows: [] };
  for (let run = 0; run < runs; run++) {
    for (const path of ["gateway", "rows"] as const) {
      const taken = await importThrough(path, conversations);
      seconds[path].push(taken);
      process.stdout.write(`run ${run + 1}, ${path} path: ${taken.toFixed(2)} s\n`);
    }
  }
  const gateway = median(seconds.gateway);
  const rows = median(seconds.rows);
  process.stdout.write(
    `writing, median: gateway appendMessages path ${gateway.toFixed(2)} s (baseline), import's own rows ${rows.toFixed(2)} s: ${(rows / gateway).toFixed(2)}x the baseline's time, ${(100 * (1 - rows / gateway)).toFixed(0)}% saved\n` +
      `the whole import (reading and converting the files, ${readSeconds.toFixed(2)} s, once for both, plus writing): ${(readSeconds + gateway).toFixed(2)} s against ${(readSeconds + rows).toFixed(2)} s, ${(100 * (1 - (readSeconds + rows) / (readSeconds + gateway))).toFixed(0)}% of the import's time saved by the import's own rows\n`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
