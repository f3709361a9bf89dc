import type { Kysely, Selectable } from "kysely";
import { queryTemplate } from "../query-template.js";
import type { ApiKeyTable, StoreSchema } from "../schema.js";

export type ApiKeyRow = Selectable<ApiKeyTable>;

/** What a key's lookup needs: the subject it acts for, and whether it was revoked. */
export type ApiKeyState = Pick<ApiKeyRow, "subject_uid" | "revoked_at">;

export async function insertApiKey(db: Kysely<StoreSchema>, row: ApiKeyRow): Promise<void> {
  await db.insertInto("verbatim_api_keys").values(row).execute();
}

/** The key with this SHA-256 (hex), read as a prepared query template (every request runs it). */
const keyQuery = queryTemplate<[string], ApiKeyState>((db, slot) =>
  db
    .selectFrom("verbatim_api_keys")
    .select(["subject_uid", "revoked_at"])
    .where("key_sha256", "=", slot(0)),
);

export async function findApiKeyState(
  db: Kysely<StoreSchema>,
  keySha256: string,
): Promise<ApiKeyState | undefined> {
  const { rows } = await keyQuery.run(db, keySha256);
  return rows[0];
}

/** Marks the key revoked at `revokedAt` (the row stays, for audit). */
export async function markApiKeyRevoked(
  db: Kysely<StoreSchema>,
  keySha256: string,
  revokedAt: string,
): Promise<void> {
  await db
    .updateTable("verbatim_api_keys")
    .set({ revoked_at: revokedAt })
    .where("key_sha256", "=", keySha256)
    .execute();
}
