import { VerbatimError } from "verbatim-llm/core";
import { choiceFromEnv, switchFromEnv, wholeNumberFromEnv } from "./env.js";

type Env = Readonly<Record<string, string | undefined>> | undefined;

/**
 * The PostgreSQL connections one `verbatim serve` opens (docs/scale.md, "Connection budget"):
 * the store's pool (requests, the shared rate limits, background upkeep), one listening
 * connection for API key changes (LISTEN/NOTIFY, gateway/keys/api-key-cache.ts) and the
 * console worker thread's read-only pool. `VERBATIM_PG_POOL_MAX` is their sum; the default, 13,
 * is what a server opened before the setting (10 + 1 + 2).
 */
export interface ConnectionPlan {
  /** Every connection the server may open at once. */
  readonly budget: number;
  /** The store's pool. */
  readonly pool: number;
  /** 1 when API key changes are listened for (the key cache), else 0. */
  readonly listener: 0 | 1;
  /** The console worker's pool; 0 builds the console's pages on the event loop. */
  readonly consoleWorker: number;
}

export const DEFAULT_PG_POOL_MAX = 13;

/** The smallest store pool: a request's transaction and a read beside it. */
const MIN_POOL = 2;

/**
 * Splits `budget` connections: one for the listener (when `listen`), the console worker's 2
 * when at least 6 are left for the store's pool beside them (else 1 when 4 are, else none: the
 * console's pages are then built on the event loop), the rest to the store's pool (at least 2).
 */
export function planConnections(budget: number, listen: boolean, name: string): ConnectionPlan {
  const listener = listen ? 1 : 0;
  const left = budget - listener;
  if (left < MIN_POOL) {
    const least = MIN_POOL + listener;
    throw new VerbatimError(
      "invalid_argument",
      `${name} must be at least ${least}, not ${budget}`,
      {
        where: name,
        hint: `Set ${name} to ${least} or more: the store's pool needs ${MIN_POOL}${listen ? ", and API key changes are heard on 1 more (VERBATIM_API_KEY_CACHE=off frees it)" : ""} (docs/scale.md, "Connection budget")`,
      },
    );
  }
  const consoleWorker = left - 2 >= 6 ? 2 : left - 1 >= 4 ? 1 : 0;
  return { budget, pool: left - consoleWorker, listener, consoleWorker };
}

/**
 * How a server or command opens PostgreSQL: VERBATIM_PG_POOLER (`transaction` behind a pooler
 * in transaction mode) and VERBATIM_PG_PREPARED_STATEMENTS (default on, off behind the pooler).
 */
export function storeOptionsFromEnv(env: Env): {
  readonly pooler: "transaction" | undefined;
  readonly preparedStatements: boolean;
} {
  const pooler = choiceFromEnv(env, "VERBATIM_PG_POOLER", ["session", "transaction"] as const);
  const behindPooler = pooler === "transaction";
  return {
    pooler: behindPooler ? "transaction" : undefined,
    preparedStatements: switchFromEnv(env, "VERBATIM_PG_PREPARED_STATEMENTS") ?? !behindPooler,
  };
}

/** Those options as `openDatabase` takes them. */
export function openOptionsFromEnv(env: Env): {
  readonly preparedStatements: boolean;
  readonly pooler?: "transaction";
} {
  const { pooler, preparedStatements } = storeOptionsFromEnv(env);
  return pooler === undefined ? { preparedStatements } : { preparedStatements, pooler };
}

/** The PostgreSQL settings of a server (docs/scale.md). */
export interface PostgresSettings {
  /** VERBATIM_PG_POOLER: `transaction` behind PgBouncer in transaction mode; else undefined. */
  readonly pooler: "transaction" | undefined;
  /** Named prepared statements: VERBATIM_PG_PREPARED_STATEMENTS, default on (off with a pooler). */
  readonly preparedStatements: boolean;
  /** Valid API keys kept while key changes are heard: VERBATIM_API_KEY_CACHE (off with a pooler). */
  readonly apiKeyCache: boolean;
  readonly connections: ConnectionPlan;
}

/**
 * VERBATIM_PG_POOLER, VERBATIM_PG_PREPARED_STATEMENTS, VERBATIM_API_KEY_CACHE and
 * VERBATIM_PG_POOL_MAX. `transaction` turns off what a pooler in transaction mode cannot keep
 * between transactions: named prepared statements (unless set on: PgBouncer 1.21 and later can
 * keep them with `max_prepared_statements`) and LISTEN/NOTIFY (the key cache; keys are read per
 * request). Asking for LISTEN through the pooler is refused.
 */
export function postgresSettingsFromEnv(env: Env): PostgresSettings {
  const { pooler, preparedStatements } = storeOptionsFromEnv(env);
  const behindPooler = pooler === "transaction";
  const cacheSetting = switchFromEnv(env, "VERBATIM_API_KEY_CACHE");
  if (behindPooler && cacheSetting === true) {
    throw new VerbatimError(
      "invalid_argument",
      "VERBATIM_API_KEY_CACHE=on needs LISTEN, which a pooler in transaction mode cannot keep",
      {
        where: "VERBATIM_API_KEY_CACHE",
        hint: 'Unset VERBATIM_API_KEY_CACHE (behind the pooler each request reads its key), or unset VERBATIM_PG_POOLER (docs/scale.md, "Behind a pooler")',
      },
    );
  }
  const apiKeyCache = cacheSetting ?? !behindPooler;
  const name = "VERBATIM_PG_POOL_MAX";
  const budget = wholeNumberFromEnv(env, name) ?? DEFAULT_PG_POOL_MAX;
  return {
    pooler,
    preparedStatements,
    apiKeyCache,
    connections: planConnections(budget, apiKeyCache, name),
  };
}
