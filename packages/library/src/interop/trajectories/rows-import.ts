import { readFile, writeFile, rename } from "node:fs/promises";
import { VerbatimError } from "../../core/errors.js";
import { parseStoredRowsJsonl } from "../../trajectory/jsonl.js";
import type { StoredTurnItem } from "../../trajectory/row.js";
import type { FileAccount, LeftOutEntry } from "../report.js";
import { importCodexRolloutAsRows } from "../codex/trajectory.js";
import { importInspectLog } from "./inspect.js";
import { importOpenHandsEvents, importOpenHandsResolver } from "./openhands.js";
import type { TrajectoryFileImport, TrajectorySource } from "./rows.js";
import { importSweAgentTrajectory } from "./swe-agent.js";
import { progressCounter, type ImportProgress } from "../progress.js";
import { readSourceFile } from "../source-files.js";

/** How each trajectory source reads one of its files (../source-names.ts says which files). */
interface TrajectoryImporter {
  importFile(file: string, bytes: Uint8Array): TrajectoryFileImport;
}

const importers: Readonly<Record<TrajectorySource, TrajectoryImporter>> = {
  "swe-agent": { importFile: importSweAgentTrajectory },
  openhands: {
    importFile: (file, bytes) =>
      file.endsWith(".jsonl")
        ? importOpenHandsResolver(file, bytes)
        : importOpenHandsEvents(file, bytes),
  },
  inspect: { importFile: importInspectLog },
  codex: { importFile: importCodexRolloutAsRows },
};

/** Reads one trajectory file of a source into stored rows, with its record account. */
export function importTrajectoryFile(
  source: TrajectorySource,
  file: string,
  bytes: Uint8Array,
): TrajectoryFileImport {
  return importers[source].importFile(file, bytes);
}

export type TurnOutcome = "imported" | "unchanged" | "refused";

export interface RowsImportReport {
  readonly source: TrajectorySource;
  readonly into: string;
  readonly files: readonly FileAccount[];
  readonly turns: readonly {
    turn_id: string;
    file: string;
    rows: number;
    outcome: TurnOutcome;
    reason?: string;
  }[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly unreadableFiles: readonly { readonly file: string; readonly reason: string }[];
  readonly totals: {
    files: number;
    bytes: number;
    rows: number;
    imported: number;
    unchanged: number;
    refused: number;
  };
}

const rowLine = (row: StoredTurnItem): string => JSON.stringify(row);

async function existingRows(into: string): Promise<StoredTurnItem[]> {
  let text: string;
  try {
    text = await readFile(into, "utf8");
  } catch {
    return [];
  }
  const parsed = parseStoredRowsJsonl(text);
  const problem = parsed.problems[0];
  if (problem !== undefined) {
    throw new VerbatimError("invalid_argument", `${into}:${problem.line}: ${problem.message}`, {
      where: into,
      hint: "--into names a rows file (JSON Lines of stored rows) or a new file; nothing was written",
    });
  }
  return parsed.rows;
}

/**
 * Imports trajectory files into a stored-rows JSON Lines file (what `verbatim trajectory
 * project` reads). A turn already in the file with the same rows is left as it is; one with
 * other rows is refused (stored items are never rewritten); new turns are appended. The file is
 * rewritten (atomically) only when a turn was added.
 */
export async function importIntoRowsFile(options: {
  readonly source: TrajectorySource;
  readonly files: readonly string[];
  readonly into: string;
  readonly onProgress?: (progress: ImportProgress) => void;
}): Promise<RowsImportReport> {
  const importer = importers[options.source];
  const rows = await existingRows(options.into);
  const byTurn = new Map<string, string>();
  for (const row of rows)
    byTurn.set(row.turn_id, (byTurn.get(row.turn_id) ?? "") + rowLine(row) + "\n");
  const fileDone = await progressCounter(options.files, options.onProgress);
  const accounts: FileAccount[] = [];
  const leftOut: LeftOutEntry[] = [];
  const unreadableFiles: { file: string; reason: string }[] = [];
  const turns: {
    turn_id: string;
    file: string;
    rows: number;
    outcome: TurnOutcome;
    reason?: string;
  }[] = [];
  let bytes = 0;
  let added = 0;
  let rowCount = 0;
  for (const file of options.files) {
    const read = readSourceFile(file);
    if (read.bytes === undefined) {
      unreadableFiles.push({ file, reason: read.reason });
      fileDone(0, 0);
      continue;
    }
    const content = read.bytes;
    const result = importer.importFile(file, content);
    accounts.push(result.account);
    leftOut.push(...result.leftOut);
    const grouped = new Map<string, StoredTurnItem[]>();
    for (const row of result.rows)
      grouped.set(row.turn_id, [...(grouped.get(row.turn_id) ?? []), row]);
    for (const [turnId, turnRows] of grouped) {
      rowCount += turnRows.length;
      const text = turnRows.map((row) => rowLine(row) + "\n").join("");
      const held = byTurn.get(turnId);
      if (held === undefined) {
        byTurn.set(turnId, text);
        rows.push(...turnRows);
        added++;
        turns.push({ turn_id: turnId, file, rows: turnRows.length, outcome: "imported" });
      } else if (held === text) {
        turns.push({ turn_id: turnId, file, rows: turnRows.length, outcome: "unchanged" });
      } else {
        turns.push({
          turn_id: turnId,
          file,
          rows: turnRows.length,
          outcome: "refused",
          reason:
            "the rows file already holds this turn with other items; stored items are never rewritten",
        });
      }
    }
    bytes += content.length;
    fileDone(content.length, result.rows.length);
  }
  if (added > 0) {
    const temporary = `${options.into}.${process.pid}.tmp`;
    await writeFile(temporary, rows.map((row) => rowLine(row) + "\n").join(""));
    await rename(temporary, options.into);
  }
  const count = (outcome: TurnOutcome): number =>
    turns.filter((turn) => turn.outcome === outcome).length;
  return {
    source: options.source,
    into: options.into,
    files: accounts,
    turns,
    leftOut,
    unreadableFiles,
    totals: {
      files: options.files.length,
      bytes,
      rows: rowCount,
      imported: count("imported"),
      unchanged: count("unchanged"),
      refused: count("refused"),
    },
  };
}
