import BetterSqlite3 from "better-sqlite3";
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

/**
 * A SQLite store's key states read on a read-only connection of their own, by a prepared
 * statement run synchronously (the same read as `keyQuery`): each read sees every commit made
 * before it, by any connection. Undefined when the file cannot be opened that way (the caller
 * reads through the store instead).
 */
export function openSqliteApiKeyReader(
  path: string,
): { find(keySha256: string): ApiKeyState | undefined; close(): void } | undefined {
  let connection: BetterSqlite3.Database | undefined;
  let statement: BetterSqlite3.Statement<[string], ApiKeyState>;
  try {
    connection = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    connection.pragma("busy_timeout = 5000");
    statement = connection.prepare(
      "select subject_uid, revoked_at from verbatim_api_keys where key_sha256 = ?",
    );
  } catch {
    connection?.close();
    return undefined;
  }
  const open = connection;
  return {
    find: (keySha256) => statement.get(keySha256),
    close() {
      if (open.open) open.close();
    },
  };
}

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
