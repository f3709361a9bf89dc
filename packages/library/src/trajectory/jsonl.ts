import { safeParseStrictJson } from "../core/strict-json.js";
import { storedTurnItemSchema, type StoredTurnItem } from "./row.js";

/**
 * Reads stored rows from JSON Lines text: one stored row (docs/trajectories.md) per line; blank
 * lines are skipped. Every bad line is reported with its line number and the reason; the good
 * lines are returned beside them, nothing is dropped silently.
 */
export interface RowLineProblem {
  /** 1-based line number. */
  readonly line: number;
  readonly message: string;
}

export interface ParsedRows {
  readonly rows: StoredTurnItem[];
  readonly problems: RowLineProblem[];
}

export function parseStoredRowsJsonl(text: string): ParsedRows {
  const rows: StoredTurnItem[] = [];
  const problems: RowLineProblem[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const line = index + 1;
    const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (body.trim() === "") return;
    const parsed = safeParseStrictJson(body);
    if (!parsed.ok) {
      problems.push({
        line,
        message: `not valid JSON: ${parsed.problem.message} (column ${parsed.problem.column})`,
      });
      return;
    }
    const result = storedTurnItemSchema.safeParse(parsed.value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const path = issue === undefined ? "" : issue.path.map(String).join(".");
      problems.push({
        line,
        message: `not a stored row: ${path === "" ? "" : `${path}: `}${issue?.message ?? "invalid"}`,
      });
      return;
    }
    rows.push(result.data as StoredTurnItem);
  });
  return { rows, problems };
}
