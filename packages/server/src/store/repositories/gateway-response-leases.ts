import type { Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";

/**
 * The leases of in_progress responses (`ai_gateway_messages.lease_expires_at`, migration 0006;
 * `lease_holder`, migration 0019): renewed by the server answering them, and, once run out, the
 * mark of a response whose server died. Like every query of the gateway's tables these only
 * read and write rows; the gateway decides (src/gateway/responses/leases.ts). Each periodic
 * statement reads through an index of in_progress rows only (docs/scale.md, "N servers on one
 * database").
 */

/**
 * Moves the leases of every in_progress message `holder` holds to `expiresAt`, in one statement
 * (the partial index of in_progress rows by holder); returns the ids it renewed.
 */
export async function renewHolderLeases(
  db: Kysely<StoreSchema>,
  holder: string,
  expiresAt: string,
): Promise<Set<string>> {
  const rows = await db
    .updateTable("ai_gateway_messages")
    .set({ lease_expires_at: expiresAt })
    .where("lease_holder", "=", holder)
    .where("status", "=", "in_progress")
    .returning("id")
    .execute();
  return new Set(rows.map((row) => row.id));
}

/**
 * Lets the leases of the given messages of `holder` run out now (responses this server no longer
 * answers but whose end could not be written): the next reconciliation ends them.
 */
export async function expireHolderLeases(
  db: Kysely<StoreSchema>,
  holder: string,
  messageIds: readonly string[],
  now: string,
): Promise<void> {
  if (messageIds.length === 0) return;
  await db
    .updateTable("ai_gateway_messages")
    .set({ lease_expires_at: now })
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
  return db
    .selectFrom("ai_gateway_messages")
    .select(["id", "subject_uid", "metadata"])
    .where("status", "=", "in_progress")
    .where("lease_expires_at", "<", now)
    .orderBy("lease_expires_at")
    .limit(limit)
    .$if(skipLocked, (query) => query.forUpdate().skipLocked())
    .execute();
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
