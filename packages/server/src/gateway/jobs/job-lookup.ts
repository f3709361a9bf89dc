import type { Kysely } from "kysely";
import { isStorableText } from "verbatim-llm/internal";
import type { StoreDatabase } from "../../store/database.js";
import {
  findJob,
  findTurn,
  lockJob,
  lockTurn,
  type JobRow,
  type TurnRow,
} from "../../store/repositories/background-jobs.js";
import { isUniqueViolation } from "../../store/errors.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { idSchema, parseOrThrow, subjectSchema } from "../validation/checks.js";
import { notFound } from "./job-errors.js";

/** A job of the subject, locked for the transaction's write when `lock`; else not found. */
export async function jobRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobId: string,
  lock: boolean,
): Promise<JobRow> {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const id = parseOrThrow(idSchema, jobId, "jobId");
  if (!isStorableText(id)) throw notFound("job", id);
  const row = lock ? await lockJob(db, subject, id) : await findJob(db, subject, id);
  if (row === undefined) throw notFound("job", id);
  return row;
}

/** A turn of the subject, locked for the transaction's write when `lock`; else not found. */
export async function turnRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  turnId: string,
  lock: boolean,
): Promise<TurnRow> {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const id = parseOrThrow(idSchema, turnId, "turnId");
  if (!isStorableText(id)) throw notFound("turn", id);
  const row = lock ? await lockTurn(db, subject, id) : await findTurn(db, subject, id);
  if (row === undefined) throw notFound("turn", id);
  return row;
}

/**
 * A write transaction, run again (up to 3 times) when a concurrent append of the same new item
 * key won the race: the next run finds the stored item.
 */
export async function writeRetryingOnKeyRace<T>(
  database: StoreDatabase,
  work: (db: Kysely<StoreSchema>) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(database, work);
    } catch (error) {
      if (attempt >= 3 || !isUniqueViolation(error)) throw error;
    }
  }
}
