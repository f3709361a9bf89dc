import { z } from "zod";
import { VerbatimError } from "../core/errors.js";
import { trajectoryItemSchema, type TrajectoryItem } from "./items.js";

/**
 * One stored row of `background_agent_job_turn_items` (SPEC B7), as the store returns it and as
 * the JSON Lines files of `verbatim trajectory project` hold it (one row per line).
 */
export const ITEM_KEY_MAX_LENGTH = 200;
/** An item key that starts with this marks a message the job's caller sent (B7). */
export const CLIENT_ITEM_KEY_PREFIX = "client:";

/** The zod schema of an item key (non-empty, bounded length). */
export const itemKeySchema = z
  .string()
  .min(1, "an item key is not empty")
  .max(ITEM_KEY_MAX_LENGTH, `an item key has at most ${ITEM_KEY_MAX_LENGTH} characters`);

export const storedTurnItemSchema = z.strictObject({
  turn_id: z.string().min(1),
  position: z.int().min(0),
  revision: z.int().min(1),
  item_key: itemKeySchema,
  item: trajectoryItemSchema,
});

export interface StoredTurnItem {
  readonly turn_id: string;
  /** Order within the turn: contiguous from 0, assigned by the store. */
  readonly position: number;
  /** The turn revision that accepted the item (steering and new prompts raise it, B8). */
  readonly revision: number;
  readonly item_key: string;
  readonly item: TrajectoryItem;
}

/** True for keys of items the job's caller sent (`client:…`). */
export function isClientItemKey(itemKey: string): boolean {
  return itemKey.startsWith(CLIENT_ITEM_KEY_PREFIX);
}

export interface TurnRows {
  readonly turn_id: string;
  readonly rows: readonly StoredTurnItem[];
}

/**
 * The order of turns the caller did not place: shorter ids first, then by UTF-16 code units.
 * The store's ids have one length and sort by creation time; numbered ids (`turn-2`,
 * `turn-10`) sort by their number. Never the order the rows came in.
 */
export function compareTurnIds(left: string, right: string): number {
  if (left.length !== right.length) return left.length - right.length;
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Groups rows by turn, each turn's rows in position order. Turns come in `turnOrder` when
 * given (a turn without rows is an empty turn, B9); turns it does not name follow, ordered by
 * their ids (`compareTurnIds`), so the same rows in any order give the same turns.
 * Refuses rows that no store would hold: a repeated or missing position, a repeated item key.
 */
export function groupRowsByTurn(
  rows: readonly StoredTurnItem[],
  turnOrder: readonly string[] = [],
): TurnRows[] {
  const byTurn = new Map<string, StoredTurnItem[]>();
  for (const turnId of turnOrder) byTurn.set(turnId, []);
  const unplaced = new Map<string, StoredTurnItem[]>();
  for (const row of rows) {
    let list = byTurn.get(row.turn_id) ?? unplaced.get(row.turn_id);
    if (list === undefined) {
      list = [];
      unplaced.set(row.turn_id, list);
    }
    list.push(row);
  }
  for (const turnId of [...unplaced.keys()].sort(compareTurnIds)) {
    byTurn.set(turnId, unplaced.get(turnId) ?? []);
  }
  const turns: TurnRows[] = [];
  for (const [turnId, list] of byTurn) {
    list.sort((a, b) => a.position - b.position);
    const keys = new Set<string>();
    list.forEach((row, index) => {
      if (row.position !== index) {
        throw inconsistent(
          turnId,
          row.position < index
            ? `position ${row.position} appears twice`
            : `position ${index} is missing (positions are contiguous from 0)`,
        );
      }
      if (keys.has(row.item_key)) {
        throw inconsistent(turnId, `item key ${JSON.stringify(row.item_key)} appears twice`);
      }
      keys.add(row.item_key);
    });
    turns.push({ turn_id: turnId, rows: list });
  }
  return turns;
}

function inconsistent(turnId: string, what: string): VerbatimError {
  return new VerbatimError("trajectory_rows_inconsistent", `turn ${turnId}: ${what}`, {
    where: `turn_id ${turnId}`,
    hint: "Pass the rows of each turn exactly as the store holds them",
  });
}
