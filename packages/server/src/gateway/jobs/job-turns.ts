import { VerbatimError } from "verbatim-llm/core";
import { isStorableText } from "verbatim-llm/internal";
import type { Sanitizer, StoredTurnItem } from "verbatim-llm/trajectory";
import type { StoreDatabase } from "../../store/database.js";
import type { Kysely } from "kysely";
import {
  insertTurn,
  listTurns,
  updateTurn,
  type JobRow,
  type TurnRow,
} from "../../store/repositories/background-jobs.js";
import type { TurnItemRow } from "../../store/repositories/background-job-items.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { newId } from "../ids.js";
import { idSchema, parseOrThrow, subjectSchema } from "../validation/checks.js";
import { notFound, stateConflict } from "./job-errors.js";
import {
  appendFresh,
  inInputOrder,
  prepareItems,
  requireClientKeys,
  reserveAndAppend,
  splitExisting,
  type PreparedItem,
} from "./job-items.js";
import { jobIdempotency, keyedWrite, replayJobKey } from "./job-idempotency.js";
import { jobRow, turnRow, writeRetryingOnKeyRace } from "./job-lookup.js";
import { storedItemFromRow, turnFromRow } from "./job-rows.js";
import type { JobTurn, TurnItemInput, TurnStatus } from "./job-types.js";

/** What the turn operations need of the jobs service. */
export interface JobsContext {
  readonly database: StoreDatabase;
  /** Runs on every appended item. */
  readonly sanitizer: Sanitizer;
  /** The time now, as stored. */
  readonly time: () => string;
}

/**
 * Starts the job's next turn (index 0, 1, …) in the running attempt, with its first items. With
 * `idempotencyKey`, a repeat returns the turn the first request started (as it is now) with the
 * request's items, and starts none.
 */
export async function startTurn(
  context: JobsContext,
  subjectUid: string,
  jobId: string,
  items: readonly TurnItemInput[] = [],
  idempotencyKey?: string,
): Promise<{ turn: JobTurn; items: StoredTurnItem[] }> {
  const prepared = prepareItems(items, context.sanitizer, "items");
  const idempotency = jobIdempotency(subjectUid, idempotencyKey, "job.turn", {
    jobId,
    items: prepared.map((item) => [item.itemKey, item.canonical]),
  });
  if (idempotency === undefined) {
    return inTransaction(context.database, async (db) =>
      startLockedTurn(context, db, await jobRow(db, subjectUid, jobId, true), prepared),
    );
  }
  const outcome = await keyedWrite(context.database, idempotency, context.time(), async (db) => {
    // After the job's lock: a concurrent repeat waits for the first and then finds its key.
    const job = await jobRow(db, subjectUid, jobId, true);
    const earlier = await replayJobKey(db, idempotency);
    if (earlier !== undefined) return { replayed: true, result: earlier };
    const started = await startLockedTurn(context, db, job, prepared);
    return { replayed: false, value: started, result: { jobId: job.id, turnId: started.turn.id } };
  });
  if (!outcome.replayed) return outcome.value;
  const { turnId } = outcome.result;
  if (turnId === undefined) {
    throw new VerbatimError("store_row_invalid", "a stored turn idempotency result has no turn", {
      where: "ai_gateway_idempotency_keys",
    });
  }
  const db = context.database.db;
  const turn = await turnRow(db, subjectUid, turnId, false);
  const { existing } = await splitExisting(db, turn.subject_uid, turn.id, prepared, "items");
  return {
    turn: turnFromRow(turn),
    items: inInputOrder(prepared, existing, []).map(storedItemFromRow),
  };
}

/** Inserts the next turn of the job locked in `db`'s transaction, with its first items. */
async function startLockedTurn(
  context: JobsContext,
  db: Kysely<StoreSchema>,
  job: JobRow,
  prepared: readonly PreparedItem[],
): Promise<{ turn: JobTurn; items: StoredTurnItem[] }> {
  if (job.status !== "running") throw stateConflict(`job ${job.id} is ${job.status}, not running`);
  const turns = await listTurns(db, job.subject_uid, job.id);
  const now = context.time();
  const turn: TurnRow = {
    id: newId("turn"),
    subject_uid: job.subject_uid,
    job_id: job.id,
    turn_index: turns.length,
    attempt: job.attempts,
    revision: 1,
    status: "running",
    item_count: 0,
    created_at: now,
    updated_at: now,
  };
  await insertTurn(db, turn);
  const rows = await appendFresh(db, turn, prepared, now);
  return {
    turn: turnFromRow({ ...turn, item_count: rows.length }),
    items: rows.map(storedItemFromRow),
  };
}

/**
 * Appends items to a running turn (B7, B8) at the next positions, with the turn's current
 * revision. A key the turn already holds returns the stored row when the item is the same and
 * is `trajectory_item_key_conflict` when it differs; nothing is written then.
 */
export async function appendItems(
  context: JobsContext,
  subjectUid: string,
  turnId: string,
  items: readonly TurnItemInput[],
): Promise<StoredTurnItem[]> {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const id = parseOrThrow(idSchema, turnId, "turnId");
  const prepared = prepareItems(items, context.sanitizer, "items");
  if (!isStorableText(id)) throw notFound("turn", id);
  return writeRetryingOnKeyRace(context.database, async (db) => {
    // Ownership first: another subject's turn is answered as a missing one (no oracle).
    const { existing, fresh } = await splitExisting(db, subject, id, prepared, "items");
    let appended: TurnItemRow[] = [];
    if (fresh.length > 0) {
      const rows = await reserveAndAppend(db, subject, id, fresh, context.time());
      if (rows === undefined) {
        const turn = await turnRow(db, subject, id, false);
        throw stateConflict(`turn ${turn.id} is ${turn.status}; steer it to prompt it again`);
      }
      appended = rows;
    } else if (existing.size === 0) {
      await turnRow(db, subject, id, false);
    }
    return inInputOrder(prepared, existing, appended).map(storedItemFromRow);
  });
}

/**
 * Steers a turn, or prompts a finished one again (B8): raises its revision, marks it running
 * and appends the caller's messages (`client:` keys) at the new revision. Stored items are
 * never rewritten. Repeating a steer whose items are all stored changes nothing.
 */
export async function steerTurn(
  context: JobsContext,
  subjectUid: string,
  turnId: string,
  items: readonly TurnItemInput[],
): Promise<{ turn: JobTurn; items: StoredTurnItem[] }> {
  const prepared = prepareItems(items, context.sanitizer, "items");
  requireClientKeys(prepared);
  return writeRetryingOnKeyRace(context.database, async (db) => {
    const turn = await turnRow(db, subjectUid, turnId, true);
    const job = await jobRow(db, turn.subject_uid, turn.job_id, false);
    const { existing, fresh } = await splitExisting(
      db,
      turn.subject_uid,
      turn.id,
      prepared,
      "items",
    );
    if (fresh.length === 0) {
      return {
        turn: turnFromRow(turn),
        items: inInputOrder(prepared, existing, []).map(storedItemFromRow),
      };
    }
    if (job.status !== "running")
      throw stateConflict(`job ${job.id} is ${job.status}, not running`);
    const now = context.time();
    const revised = { ...turn, revision: turn.revision + 1, status: "running", updated_at: now };
    await updateTurn(db, turn.subject_uid, turn.id, {
      revision: revised.revision,
      status: "running",
      updated_at: now,
    });
    const appended = await appendFresh(db, revised, fresh, now);
    return {
      turn: turnFromRow({ ...revised, item_count: turn.item_count + appended.length }),
      items: inInputOrder(prepared, existing, appended).map(storedItemFromRow),
    };
  });
}

/** Ends a running turn. */
export async function finishTurn(
  context: JobsContext,
  subjectUid: string,
  turnId: string,
  status: Exclude<TurnStatus, "running">,
): Promise<JobTurn> {
  return inTransaction(context.database, async (db) => {
    const turn = await turnRow(db, subjectUid, turnId, true);
    if (turn.status !== "running")
      throw stateConflict(`turn ${turn.id} is ${turn.status}, not running`);
    const changes = { status, updated_at: context.time() };
    await updateTurn(db, turn.subject_uid, turn.id, changes);
    return turnFromRow({ ...turn, ...changes });
  });
}
