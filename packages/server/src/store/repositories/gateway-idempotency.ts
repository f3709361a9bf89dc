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
