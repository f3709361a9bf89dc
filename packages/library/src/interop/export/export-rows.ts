import { readFile } from "node:fs/promises";
import { projectItemsToChatML } from "../../trajectory/chatml-projection.js";
import { parseStoredRowsJsonl } from "../../trajectory/jsonl.js";
import { groupRowsByTurn } from "../../trajectory/row.js";
import { chatMLLine, type ExportFormat, type ExportedPackage } from "./training-lines.js";

/**
 * A stored-rows file (what `verbatim import … --into rows.jsonl` writes) as one line per job
 * turn, in the order the turns first appear: the turn's items projected to ChatML (B9).
 */
export async function exportRowsFile(
  path: string,
  format: ExportFormat,
  system: string | undefined,
): Promise<ExportedPackage[]> {
  const parsed = parseStoredRowsJsonl(await readFile(path, "utf8"));
  const problem = parsed.problems[0];
  if (problem !== undefined) {
    return [
      {
        path,
        line: undefined,
        reason: `its conversation cannot be read: line ${problem.line}: ${problem.message}`,
      },
    ];
  }
  return groupRowsByTurn(parsed.rows).map((turn) => ({
    path: `${path}#${turn.turn_id}`,
    line: chatMLLine(projectItemsToChatML(turn.rows.map((row) => row.item)), format, system),
  }));
}
