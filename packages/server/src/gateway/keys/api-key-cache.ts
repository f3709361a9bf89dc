import { sha256Hex } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import { openSqliteApiKeyReader } from "../../store/repositories/api-keys.js";
import { API_KEY_CHANGES_CHANNEL } from "../../store/migrations/0004-api-key-notifications.js";
import { listenForChanges, type ChangeListener } from "../../store/notifications.js";
import { looksLikeApiKey, subjectOfApiKeyHash } from "./api-keys.js";

/** Looks API keys up for the caller routes. */
export interface ApiKeyLookup {
  /** The subject a live key acts for; undefined for unknown, malformed or revoked keys. */
  subjectOf(key: string): Promise<string | undefined>;
  /** True when valid keys are kept in memory (PostgreSQL, while notifications arrive). */
  readonly caching: boolean;
  close(): Promise<void>;
}

export interface ApiKeyLookupOptions {
  /**
   * Keep valid keys where the database can notify, and on SQLite read keys on a connection of
   * the lookup's own (default true); false reads every time through the store's connection.
   */
  readonly cache?: boolean;
  /** Longest a valid key is trusted without reading it again (default 10 s). */
  readonly maxAgeMs?: number;
  /** Most keys kept (default 10,000; the oldest are forgotten first). */
  readonly maxKeys?: number;
  /** Told about a lost notification connection (it reconnects by itself). */
  readonly onError?: (error: Error) => void;
  /** The clock (tests). */
  readonly now?: () => number;
}

/**
 * API key lookups. On SQLite every request reads its key (a statement in the process): on a
 * read connection of the lookup's own, synchronously, so a lookup neither goes through the
 * store's query builder nor waits for the store's connection while a transaction holds it (a
 * call's placing); each read sees every change committed before it, by this process or another,
 * so nothing is kept and a revoked key is refused at once. On
 * PostgreSQL, where that read is a round trip, valid keys are kept in memory while the server
 * listens for the changes of `verbatim_api_keys` (a trigger notifies each update or deletion
 * on commit, migration 0004): a revoked key is forgotten as soon as the notification arrives,
 * about a round trip after the commit; while the listening connection is down nothing is
 * kept, so a revocation then counts at once. `maxAgeMs` bounds the trust in a kept key even if
 * notifications stopped unnoticed.
 * Unknown and revoked keys are never kept: a key created by another process works at once.
 */
export async function openApiKeyLookup(
  database: StoreDatabase,
  options: ApiKeyLookupOptions = {},
): Promise<ApiKeyLookup> {
  const maxAgeMs = options.maxAgeMs ?? 10_000;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? (() => Date.now());
  const kept = new Map<string, { readonly subject: string; readonly at: number }>();
  // Bumped on every change and reset: a read that started before one is not kept.
  let generation = 0;
  const listener: ChangeListener | undefined =
    options.cache === false
      ? undefined
      : await listenForChanges(database, API_KEY_CHANGES_CHANNEL, {
          onChange(hash) {
            generation++;
            kept.delete(hash);
          },
          onReset() {
            generation++;
            kept.clear();
          },
          ...(options.onError === undefined ? {} : { onError: options.onError }),
        });
  const listening = () => listener?.listening === true;
  if (options.cache !== false) {
    const read = sqliteKeyReader(database);
    if (read !== undefined) return read;
  }
  return {
    get caching() {
      return listening();
    },
    async subjectOf(key) {
      if (!looksLikeApiKey(key)) return undefined;
      const hash = sha256Hex(key);
      const entry = kept.get(hash);
      if (entry !== undefined && listening() && now() - entry.at < maxAgeMs) return entry.subject;
      const started = generation;
      const subject = await subjectOfApiKeyHash(database, hash);
      if (subject === undefined) {
        kept.delete(hash);
      } else if (listening() && generation === started) {
        kept.delete(hash);
        kept.set(hash, { subject, at: now() });
        for (const oldest of kept.keys()) {
          if (kept.size <= maxKeys) break;
          kept.delete(oldest);
        }
      }
      return subject;
    },
    async close() {
      kept.clear();
      await listener?.close();
    },
  };
}

/**
 * SQLite: lookups on a read-only connection of their own (a prepared statement, run
 * synchronously); undefined for an in-memory database (a second connection would see another
 * database) or one that cannot be read that way, which then reads through the store.
 */
function sqliteKeyReader(database: StoreDatabase): ApiKeyLookup | undefined {
  const { location } = database;
  if (location.dialect !== "sqlite" || location.path === ":memory:" || location.path === "") {
    return undefined;
  }
  const reader = openSqliteApiKeyReader(location.path);
  if (reader === undefined) return undefined;
  return {
    caching: false,
    subjectOf(key) {
      if (!looksLikeApiKey(key)) return Promise.resolve(undefined);
      try {
        const row = reader.find(sha256Hex(key));
        return Promise.resolve(
          row === undefined || row.revoked_at !== null ? undefined : row.subject_uid,
        );
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    close() {
      reader.close();
      return Promise.resolve();
    },
  };
}
