import type { StoredTurnItem } from "../../trajectory/row.js";
import type { ModelUsage } from "../../trajectory/usage.js";
import type { TrajectorySource } from "./rows.js";

/** One source turn of an imported job: its id in the source's terms and its rows in order. */
export interface ImportedJobTurn {
  readonly sourceTurnId: string;
  readonly rows: readonly StoredTurnItem[];
}

/**
 * One background-agent job read from a trajectory file: a SWE-agent run, an OpenHands run or
 * resolver issue, an Inspect sample and epoch (one turn each), or a whole Codex rollout (one
 * turn per Codex turn). `sourceId` names it in the source's terms (the id of its one turn, or
 * `codex:<session>`): a database import keys re-runs by it.
 */
export interface ImportedJob {
  readonly sourceId: string;
  readonly turns: readonly ImportedJobTurn[];
  /** The run totals the source recorded (one entry per model), when it recorded any. */
  readonly usage?: readonly ModelUsage[];
}

/** A file's rows grouped into turns, in the order the turns first appear. */
function turnsOf(rows: readonly StoredTurnItem[]): ImportedJobTurn[] {
  const byTurn = new Map<string, StoredTurnItem[]>();
  for (const row of rows) {
    let list = byTurn.get(row.turn_id);
    if (list === undefined) {
      list = [];
      byTurn.set(row.turn_id, list);
    }
    list.push(row);
  }
  return [...byTurn].map(([sourceTurnId, list]) => ({
    sourceTurnId,
    rows: list.sort((a, b) => a.position - b.position),
  }));
}

/**
 * The jobs of one imported trajectory file: a Codex rollout is one job whose turns are its
 * Codex turns; every other source gives one job per turn (each run, issue or sample is an
 * agent run of its own), carrying the run totals `jobUsage` has for its turn.
 */
export function trajectoryJobs(
  source: TrajectorySource,
  rows: readonly StoredTurnItem[],
  jobUsage?: ReadonlyMap<string, readonly ModelUsage[]>,
): ImportedJob[] {
  const turns = turnsOf(rows);
  if (source !== "codex")
    return turns.map((turn) => {
      const usage = jobUsage?.get(turn.sourceTurnId);
      return {
        sourceId: turn.sourceTurnId,
        turns: [turn],
        ...(usage === undefined || usage.length === 0 ? {} : { usage }),
      };
    });
  const first = turns[0];
  if (first === undefined) return [];
  // Codex turn ids are `codex:<session>:<turn id>`: the job is the session.
  const cut = first.sourceTurnId.lastIndexOf(":");
  return [{ sourceId: first.sourceTurnId.slice(0, cut), turns }];
}
