import type { FastifyInstance } from "fastify";
import { sha256Hex, VerbatimError } from "verbatim-llm/core";
import { redisLimitBackend } from "../gateway/limits/redis-limits.js";
import {
  burstOf,
  postgresLimitBackend,
  SharedLimits,
  type LimitBackend,
  type LimitRate,
  type RequestLimiter,
} from "../gateway/limits/shared-limits.js";
import type { StoreDatabase } from "../store/database.js";

/**
 * VERBATIM_REDIS_URL: the limits' buckets in Redis instead of PostgreSQL (`redis://` or
 * `rediss://`); undefined when unset. A clear error for anything else.
 */
export function redisUrlFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const name = "VERBATIM_REDIS_URL";
  const text = env[name]?.trim();
  if (text === undefined || text === "") return undefined;
  let valid = false;
  try {
    valid = ["redis:", "rediss:"].includes(new URL(text).protocol);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw new VerbatimError("invalid_argument", `${name} must be a redis:// or rediss:// URL`, {
      where: name,
      hint: `Set ${name} to redis://[user:password@]host[:port][/db], or unset it to share the limits through PostgreSQL (docs/scale.md, "Limits across servers")`,
    });
  }
  return text;
}

/** The Redis backend of VERBATIM_REDIS_URL, or undefined when unset (not connected yet). */
export async function redisLimitsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): Promise<LimitBackend | undefined> {
  const url = redisUrlFromEnv(env);
  return url === undefined ? undefined : redisLimitBackend(url);
}

export interface ServerLimits {
  /** The per-API-key rate limit; `local` limits alone, or while the shared store fails. */
  apiKeys(rate: LimitRate, local: RequestLimiter): RequestLimiter;
  /** The failed-authentication limit per client address (keys are address keys). */
  addresses(rate: LimitRate, local: RequestLimiter): RequestLimiter;
}

/**
 * The server's limits: shared through `backend`, by default PostgreSQL's table on a PostgreSQL
 * store, in process on SQLite or with `false` (docs/scale.md, "Limits across servers"). Shared
 * buckets name API keys by their SHA-256 only, and hold the rate in their name. A failing shared store is logged once (error),
 * and its recovery (info); the store's sweeper and backend close with the app.
 */
export function sharedLimitsFor(
  app: FastifyInstance,
  database: StoreDatabase,
  backend: LimitBackend | false | undefined,
): ServerLimits {
  const chosen =
    backend ??
    (database.capabilities.dialect === "postgres" ? postgresLimitBackend(database) : false);
  if (chosen === false)
    return { apiKeys: (_rate, local) => local, addresses: (_rate, local) => local };
  const shared = new SharedLimits(chosen, {
    onFailure: (error) =>
      app.log.error(
        { err: error },
        "the shared rate limits failed: each server limits on its own until they answer again",
      ),
    onRecovery: () => app.log.info("the shared rate limits answer again"),
  });
  app.addHook("onClose", () => shared.close());
  // A bucket's name holds its rate: servers set differently never read each other's times.
  const named = (rate: LimitRate) => `${rate.perMinute}/${burstOf(rate)}`;
  return {
    apiKeys: (rate, local) =>
      shared.limiter(rate, (key) => `key:${named(rate)}:${sha256Hex(key)}`, local),
    addresses: (rate, local) =>
      shared.limiter(rate, (address) => `auth:${named(rate)}:${address}`, local),
  };
}
