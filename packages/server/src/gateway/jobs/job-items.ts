import type { Kysely } from "kysely";
import { canonicalJsonText, VerbatimError } from "verbatim-llm/core";
import type { StoreSchema } from "../../store/schema.js";
import type { TurnRow } from "../../store/repositories/background-jobs.js";
import { reserveTurnPositions, updateTurn } from "../../store/repositories/background-jobs.js";
import {
  findTurnItemsByKey,
  insertTurnItems,
  type TurnItemRow,
} from "../../store/repositories/background-job-items.js";
import { trajectoryItemSchema, type TrajectoryItem, type Sanitizer } from "verbatim-llm/trajectory";
import { isClientItemKey, itemKeySchema } from "verbatim-llm/internal";
import { checkStoredText, parseOrThrow } from "../validation/checks.js";
import type { TurnItemInput } from "./job-types.js";

/** Limits on one append (docs/store.md). */
export const MAX_ITEMS_PER_APPEND = 1000;
export const MAX_ITEM_BYTES = 4 * 1024 * 1024;

export interface PreparedItem {
  readonly itemKey: string;
  readonly item: TrajectoryItem;
  /** The item's JSON text as stored. */
  readonly text: string;
  /** Its canonical text, to compare a repeated key with the stored item. */
  readonly canonical: string;
}

/** Validates and sanitizes items before any write; repeated keys in one batch must agree. */
export function prepareItems(
  inputs: readonly TurnItemInput[],
  sanitizer: Sanitizer,
  where: string,
): PreparedItem[] {
  if (!Array.isArray(inputs)) {
    throw new VerbatimError("trajectory_row_invalid", "items must be an array", { where });
  }
  if (inputs.length > MAX_ITEMS_PER_APPEND) {
    throw new VerbatimError(
      "gateway_content_too_large",
      `an append takes at most ${MAX_ITEMS_PER_APPEND} items, got ${inputs.length}`,
      { where, hint: "Split the append; nothing was written" },
    );
  }
  const byKey = new Map<string, PreparedItem>();
  const out: PreparedItem[] = [];
  inputs.forEach((input, index) => {
    const at = `${where}[${index}]`;
    const itemKey = parseOrThrow(itemKeySchema, input?.item_key, `${at}.item_key`);
    // The stored-text rule for the key and every string of the item, before the schema: the
    // key is compared in SQL, and a lone surrogate or NUL would not come back as sent.
    checkStoredText(itemKey, `${at}.item_key`);
    checkStoredText(input.item, `${at}.item`);
    const parsed = trajectoryItemSchema.safeParse(input.item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new VerbatimError(
        "trajectory_row_invalid",
        `not a trajectory item: ${issue?.message ?? "invalid"}`,
        {
          where: `${at}.item${issue === undefined ? "" : issue.path.map((p) => `.${String(p)}`).join("")}`,
          hint: "Send one of the item types of docs/trajectories.md; nothing was written",
        },
      );
    }
    const item = sanitizer.sanitizeItem(parsed.data as TrajectoryItem).value;
    const text = JSON.stringify(item);
    if (new TextEncoder().encode(text).length > MAX_ITEM_BYTES) {
      throw new VerbatimError(
        "gateway_content_too_large",
        `the item is over ${MAX_ITEM_BYTES} bytes`,
        {
          where: `${at}.item`,
          hint: "Store less content in one item; nothing was written",
        },
      );
    }
    const prepared = { itemKey, item, text, canonical: canonicalJsonText(item) };
    const earlier = byKey.get(itemKey);
    if (earlier !== undefined) {
      if (earlier.canonical !== prepared.canonical) throw conflict(itemKey, at);
      return;
    }
    byKey.set(itemKey, prepared);
    out.push(prepared);
  });
  return out;
}

function conflict(itemKey: string, where: string): VerbatimError {
  return new VerbatimError(
    "trajectory_item_key_conflict",
    `the turn already holds a different item with key ${JSON.stringify(itemKey)}`,
    { where, hint: "Use a new item key for a new item; nothing was written" },
  );
}

/**
 * Which prepared items the subject's turn already holds (the same: fine; different: conflict).
 * The lookup names the subject, so another subject's turn holds nothing here and no item of it
 * is ever compared: its items all look fresh, and the write that follows finds no running turn
 * of the subject and answers `job_not_found`, as for a missing turn (no oracle).
 */
export async function splitExisting(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  items: readonly PreparedItem[],
  where: string,
): Promise<{ existing: Map<string, TurnItemRow>; fresh: PreparedItem[] }> {
  const rows = await findTurnItemsByKey(
    db,
    subjectUid,
    turnId,
    items.map((item) => item.itemKey),
  );
  const existing = new Map(rows.map((row) => [row.item_key, row]));
  const fresh: PreparedItem[] = [];
  items.forEach((item, index) => {
    const stored = existing.get(item.itemKey);
    if (stored === undefined) {
      fresh.push(item);
      return;
    }
    if (canonicalJsonText(JSON.parse(stored.item) as unknown) !== item.canonical) {
      throw conflict(item.itemKey, `${where}[${index}]`);
    }
  });
  return { existing, fresh };
}

/**
 * Appends the fresh items at the turn's next positions, with the turn's current revision, and
 * moves the turn's `item_count` on. The caller holds the turn's row lock (`lockTurn`), so
 * concurrent appends get contiguous, distinct positions.
 */
export async function appendFresh(
  db: Kysely<StoreSchema>,
  turn: TurnRow,
  fresh: readonly PreparedItem[],
  now: string,
): Promise<TurnItemRow[]> {
  const rows: TurnItemRow[] = fresh.map((item, index) => ({
    turn_id: turn.id,
    position: turn.item_count + index,
    revision: turn.revision,
    item_key: item.itemKey,
    item: item.text,
    subject_uid: turn.subject_uid,
    job_id: turn.job_id,
    created_at: now,
  }));
  await insertTurnItems(db, rows);
  if (rows.length > 0) {
    await updateTurn(db, turn.subject_uid, turn.id, {
      item_count: turn.item_count + rows.length,
      updated_at: now,
    });
  }
  return rows;
}

/** The rows for the inputs in input order: stored ones for repeated keys, new ones else. */
export function inInputOrder(
  items: readonly PreparedItem[],
  existing: ReadonlyMap<string, TurnItemRow>,
  appended: readonly TurnItemRow[],
): TurnItemRow[] {
  const byKey = new Map(existing);
  for (const row of appended) byKey.set(row.item_key, row);
  return items.flatMap((item) => {
    const row = byKey.get(item.itemKey);
    return row === undefined ? [] : [row];
  });
}

/**
 * Appends fresh items to a running turn in one step: the turn's row is updated first (which
 * takes its row lock and moves `item_count` on by the number of items, returning the turn as
 * it now is), then the items are inserted at the positions that frees. Undefined when the
 * turn does not exist for the subject or is not running (nothing written). A concurrent
 * append of the same new key makes the insert hit the (subject_uid, turn_id, item_key) unique
 * key: the caller retries the transaction, which then finds the stored item.
 */
export async function reserveAndAppend(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  fresh: readonly PreparedItem[],
  now: string,
): Promise<TurnItemRow[] | undefined> {
  const turn = await reserveTurnPositions(db, subjectUid, turnId, fresh.length, now);
  if (turn === undefined) return undefined;
  const first = turn.item_count - fresh.length;
  const rows: TurnItemRow[] = fresh.map((item, index) => ({
    turn_id: turn.id,
    position: first + index,
    revision: turn.revision,
    item_key: item.itemKey,
    item: item.text,
    subject_uid: turn.subject_uid,
    job_id: turn.job_id,
    created_at: now,
  }));
  await insertTurnItems(db, rows);
  return rows;
}

/** Steering sends the caller's messages: every key starts with `client:` (B7). */
export function requireClientKeys(items: readonly PreparedItem[]): void {
  items.forEach((item, index) => {
    if (!isClientItemKey(item.itemKey)) {
      throw new VerbatimError(
        "gateway_input_invalid",
        `a steering item's key starts with "client:", got ${JSON.stringify(item.itemKey)}`,
        { where: `items[${index}].item_key`, hint: "Steering sends the caller's messages" },
      );
    }
  });
}
