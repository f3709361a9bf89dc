import type { Kysely, Selectable } from "kysely";
import type { GatewayImageTable, StoreSchema } from "../schema.js";

export type GatewayImageRow = Selectable<GatewayImageTable>;

/** Writes images not held yet (content-addressed: a held SHA-256 is left as it is). */
export async function insertImages(
  db: Kysely<StoreSchema>,
  rows: readonly GatewayImageRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto("ai_gateway_images")
    .values([...rows])
    .onConflict((conflict) => conflict.columns(["subject_uid", "sha256"]).doNothing())
    .execute();
}

/** The subject's images among `sha256s` (those not held are absent from the answer). */
export async function findImages(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  sha256s: readonly string[],
): Promise<GatewayImageRow[]> {
  if (sha256s.length === 0) return [];
  return db
    .selectFrom("ai_gateway_images")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("sha256", "in", [...sha256s])
    .execute();
}
