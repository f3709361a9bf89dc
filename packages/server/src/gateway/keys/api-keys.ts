import { randomBytes } from "node:crypto";
import { VerbatimError, sha256Hex } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import {
  findApiKeyState,
  insertApiKey,
  markApiKeyRevoked,
} from "../../store/repositories/api-keys.js";
import { checkSubjectUid } from "../subject-uid.js";

/**
 * Per-subject API keys. A key is `vbk_` and 43 base64url characters (256 random bits); only its
 * SHA-256 is stored (`verbatim_api_keys`), so a copy of the database gives no usable key. Every
 * request looks its key up, so a key created or revoked by another process (`verbatim keys`)
 * counts at once.
 */
const KEY_PREFIX = "vbk_";
const KEY_PATTERN = /^vbk_[A-Za-z0-9_-]{43}$/;

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  readonly key: string;
  readonly subjectUid: string;
  readonly createdAt: string;
}

export function looksLikeApiKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}

export async function createApiKey(
  database: StoreDatabase,
  subjectUid: string,
): Promise<CreatedApiKey> {
  checkSubjectUid(subjectUid);
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const createdAt = new Date().toISOString();
  await insertApiKey(database.db, {
    key_sha256: sha256Hex(key),
    subject_uid: subjectUid,
    key_prefix: key.slice(0, 10),
    created_at: createdAt,
    revoked_at: null,
  });
  return { key, subjectUid, createdAt };
}

/**
 * Marks the key revoked (the row stays, for audit). Unknown keys are `api_key_not_found`; a key
 * revoked before keeps its first revocation time (`alreadyRevoked`).
 */
export async function revokeApiKey(
  database: StoreDatabase,
  key: string,
): Promise<{
  readonly subjectUid: string;
  readonly revokedAt: string;
  readonly alreadyRevoked: boolean;
}> {
  const hash = sha256Hex(key.trim());
  const row = await findApiKeyState(database.db, hash);
  if (row === undefined) {
    throw new VerbatimError("api_key_not_found", "this key is not stored in the database", {
      hint: "Check the key and the --db it was created in",
    });
  }
  if (row.revoked_at !== null) {
    return { subjectUid: row.subject_uid, revokedAt: row.revoked_at, alreadyRevoked: true };
  }
  const revokedAt = new Date().toISOString();
  await markApiKeyRevoked(database.db, hash, revokedAt);
  return { subjectUid: row.subject_uid, revokedAt, alreadyRevoked: false };
}

/**
 * The subject a live key acts for; undefined for unknown, malformed or revoked keys. Reads the
 * database every time (the server's lookups go through `openApiKeyLookup`).
 */
export async function subjectOfApiKey(
  database: StoreDatabase,
  key: string,
): Promise<string | undefined> {
  if (!looksLikeApiKey(key)) return undefined;
  return subjectOfApiKeyHash(database, sha256Hex(key));
}

/** The subject of the live key with this SHA-256 (hex); undefined when unknown or revoked. */
export async function subjectOfApiKeyHash(
  database: StoreDatabase,
  hash: string,
): Promise<string | undefined> {
  const row = await findApiKeyState(database.db, hash);
  if (row === undefined || row.revoked_at !== null) return undefined;
  return row.subject_uid;
}
