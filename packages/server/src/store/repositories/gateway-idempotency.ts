import type { Kysely, Selectable } from "kysely";
import type { GatewayIdempotencyKeyTable, StoreSchema } from "../schema.js";

export type IdempotencyKeyRow = Selectable<GatewayIdempotencyKeyTable>;

export async function findIdempotencyKey(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom("ai_gateway_idempotency_keys")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("idempotency_key", "=", key)
    .executeTakeFirst();
}

/**
 * Records a key. Written first in the transaction that does the work: a concurrent request
 * with the same key waits on it (PostgreSQL) and then fails on the primary key, so at most one
 * of them writes anything.
 */
export async function insertIdempotencyKey(
  db: Kysely<StoreSchema>,
  row: IdempotencyKeyRow,
): Promise<void> {
  await db.insertInto("ai_gateway_idempotency_keys").values(row).execute();
}

/** The rows of those of `keys` that are recorded for the subject (in no particular order). */
export async function findIdempotencyKeys(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  keys: readonly string[],
): Promise<IdempotencyKeyRow[]> {
  if (keys.length === 0) return [];
  return db
    .selectFrom("ai_gateway_idempotency_keys")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("idempotency_key", "in", keys)
    .execute();
}

/** Records keys in one statement, leaving a key that is recorded already as it is. */
export async function insertIdempotencyKeysIfAbsent(
  db: Kysely<StoreSchema>,
  rows: readonly IdempotencyKeyRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto("ai_gateway_idempotency_keys")
    .values([...rows])
    .onConflict((conflict) => conflict.columns(["subject_uid", "idempotency_key"]).doNothing())
    .execute();
}
