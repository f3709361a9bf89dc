import type { Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";

/**
 * The leases of in_progress responses (`ai_gateway_messages.lease_expires_at`, migration 0006):
 * renewed by the server answering them, and, once run out, the mark of a response whose server
 * died. Like every query of the gateway's tables these only read and write rows; the gateway
 * decides (src/gateway/responses/leases.ts).
 */

/** Ids per renewal statement: well under both databases' limits on bound parameters. */
const IDS_PER_STATEMENT = 1000;

/**
 * Moves the leases of the given in_progress messages to `expiresAt`; returns the ids it renewed
 * (a message missing from the answer is no longer in_progress: finished or cancelled elsewhere).
 */
export async function renewLeaseRows(
  db: Kysely<StoreSchema>,
  messageIds: readonly string[],
  expiresAt: string,
): Promise<Set<string>> {
  const renewed = new Set<string>();
  for (let start = 0; start < messageIds.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .updateTable("ai_gateway_messages")
      .set({ lease_expires_at: expiresAt })
      .where("id", "in", messageIds.slice(start, start + IDS_PER_STATEMENT))
      .where("status", "=", "in_progress")
      .returning("id")
      .execute();
    for (const row of rows) renewed.add(row.id);
  }
  return renewed;
}

/** In_progress messages whose lease ran out before `now`, oldest lease first. */
export async function findExpiredLeaseRows(
  db: Kysely<StoreSchema>,
  now: string,
  limit: number,
): Promise<{ id: string; subject_uid: string; metadata: string }[]> {
  return db
    .selectFrom("ai_gateway_messages")
    .select(["id", "subject_uid", "metadata"])
    .where("status", "=", "in_progress")
    .where("lease_expires_at", "<", now)
    .orderBy("lease_expires_at")
    .limit(limit)
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
