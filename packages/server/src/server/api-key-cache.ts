import { sha256Hex } from "verbatim-llm/core";
import type { StoreDatabase } from "../store/index.js";
import { API_KEY_CHANGES_CHANNEL } from "../store/migrations/0004-api-key-notifications.js";
import { listenForChanges, type ChangeListener } from "../store/notifications.js";
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
  /** Keep valid keys where the database can notify (default true); false reads every time. */
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
 * API key lookups. On SQLite every request reads its key (a statement in the process). On
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
