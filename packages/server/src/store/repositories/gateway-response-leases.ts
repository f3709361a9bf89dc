import { sql, type Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * The leases of in_progress responses (`ai_gateway_messages.lease_expires_at`, migration 0006;
 * `lease_holder`, migration 0019): renewed by the server answering them, and, once run out, the
 * mark of a response whose server died. Like every query of the gateway's tables these only
 * read and write rows; the gateway decides (src/gateway/responses/leases.ts). Each periodic
 * statement reads through an index of in_progress rows only (docs/scale.md, "N servers on one
 * database").
 */

/** Subjects one renewal statement names at most (bounded IN lists, as elsewhere). */
const SUBJECTS_PER_STATEMENT = 500;

/**
 * Moves the leases of every in_progress message `holder` holds for these subjects to
 * `expiresAt`, in one statement per 500 subjects (the partial index of in_progress rows by
 * holder; the subjects route it to their partitions); returns the ids it renewed.
 */
export async function renewHolderLeases(
  db: Kysely<StoreSchema>,
  holder: string,
  subjectUids: readonly string[],
  expiresAt: string,
): Promise<Set<string>> {
  const renewed = new Set<string>();
  for (let start = 0; start < subjectUids.length; start += SUBJECTS_PER_STATEMENT) {
    const rows = await db
      .updateTable("ai_gateway_messages")
      .set({ lease_expires_at: expiresAt })
      .where("subject_uid", "in", subjectUids.slice(start, start + SUBJECTS_PER_STATEMENT))
      .where("lease_holder", "=", holder)
      .where("status", "=", "in_progress")
      .returning("id")
      .execute();
    for (const row of rows) renewed.add(row.id);
  }
  return renewed;
}

/**
 * Lets the leases of the given messages of a subject held by `holder` run out now (responses
 * this server no longer answers but whose end could not be written): the next reconciliation
 * ends them.
 */
export async function expireHolderLeases(
  db: Kysely<StoreSchema>,
  holder: string,
  subjectUid: string,
  messageIds: readonly string[],
  now: string,
): Promise<void> {
  if (messageIds.length === 0) return;
  await db
    .updateTable("ai_gateway_messages")
    .set({ lease_expires_at: now })
    .where("subject_uid", "=", subjectUid)
    .where("lease_holder", "=", holder)
    .where("status", "=", "in_progress")
    .where("id", "in", messageIds)
    .execute();
}

/**
 * In_progress messages whose lease ran out before `now`, oldest lease first (the partial index
 * of in_progress rows by lease end), at most `limit`. With `skipLocked` (PostgreSQL, inside a
 * transaction) the rows are locked until it ends and rows another transaction locked are
 * skipped: two servers reconciling at once never take the same response.
 */
export async function claimExpiredLeaseRows(
  db: Kysely<StoreSchema>,
  now: string,
  limit: number,
  skipLocked: boolean,
): Promise<{ id: string; subject_uid: string; metadata: string }[]> {
  return (
    db
      .selectFrom("ai_gateway_messages")
      .select(["id", "subject_uid", "metadata"])
      .where("status", "=", "in_progress")
      .where("lease_expires_at", "<", now)
      .orderBy("lease_expires_at")
      .limit(limit)
      .$if(skipLocked, (query) => query.forUpdate().skipLocked())
      // Across subjects by nature: any server ends any subject's abandoned responses (each is
      // then ended by its subject, endAbandonedRow).
      .modifyEnd(sql.raw(ACROSS_SUBJECTS))
      .execute()
  );
}

/**
 * Ends an abandoned message: only while it is still in_progress with its lease run out before
 * `now` (a lease renewed meanwhile keeps it). True when it was ended.
 */
export async function endAbandonedRow(
  db: Kysely<StoreSchema>,
  row: { readonly id: string; readonly subject_uid: string },
  final: { readonly status: string; readonly metadata: string; readonly updated_at: string },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_messages")
    .set({ status: final.status, metadata: final.metadata, updated_at: final.updated_at })
    .where("id", "=", row.id)
    .where("subject_uid", "=", row.subject_uid)
    .where("status", "=", "in_progress")
    .where("lease_expires_at", "<", now)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
