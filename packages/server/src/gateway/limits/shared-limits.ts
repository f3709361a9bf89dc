import type { StoreDatabase } from "../../store/database.js";
import {
  deleteFullRateLimitBuckets,
  rateLimitAheadMs,
  takeRateLimitToken,
  type RateLimitTake,
} from "../../store/repositories/rate-limits.js";

/**
 * Limits every server of one deployment shares (docs/scale.md, "Limits across servers"): the
 * per-API-key rate limit and the failed-authentication limit, kept in PostgreSQL (or Redis,
 * gateway/limits/redis-limits.ts) instead of in each process, so N servers admit the
 * configured rate, not N times it.
 */

/** A limit as the settings give it: `perMinute` tokens a minute, buckets of `burst`. */
export interface LimitRate {
  readonly perMinute: number;
  readonly burst?: number;
}

/** The bucket size of a rate: `burst`, by default a tenth of a minute's tokens (at least 1). */
export function burstOf(rate: LimitRate): number {
  return Math.max(1, rate.burst ?? Math.ceil(rate.perMinute / 6));
}

/** What a limiter answers (in process or shared): 0 when admitted, else seconds to wait. */
export interface RequestLimiter {
  /** Takes one token of `key`'s bucket if it has one; 0 when taken, else the seconds until one is back. */
  take(key: string): number | Promise<number>;
  /** The seconds until `key` may take a token (0: it may now), without taking one. */
  waitSeconds(key: string): number | Promise<number>;
}

/** Where shared buckets live: one atomic step per request (a generic cell rate algorithm). */
export interface LimitBackend {
  take(bucket: string, intervalMs: number, toleranceMs: number): Promise<RateLimitTake>;
  /** How far the bucket's empty time is ahead of now, in ms (≤ 0: full). */
  aheadMs(bucket: string): Promise<number>;
  /** Removes buckets that are full again (PostgreSQL; Redis expires them itself). */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

/** The PostgreSQL backend: the unlogged table `verbatim_rate_limits` (migration 0018). */
export function postgresLimitBackend(database: StoreDatabase): LimitBackend {
  return {
    take: (bucket, intervalMs, toleranceMs) =>
      takeRateLimitToken(database.db, bucket, intervalMs, toleranceMs),
    aheadMs: (bucket) => rateLimitAheadMs(database.db, bucket),
    // A bucket full for a minute is gone; a minute covers clock steps between statements.
    sweep: async () => void (await deleteFullRateLimitBuckets(database.db, 60_000)),
    close: async () => undefined,
  };
}

/** How long requests go to the in-process limiters after the shared store failed, by default. */
export const SHARED_LIMITS_RETRY_MS = 5_000;

export interface SharedLimitsOptions {
  /** Longest wait for the shared store before a request is limited in process (default 500 ms). */
  readonly timeoutMs?: number;
  /** How long after a failure requests go to the in-process limiters (default 5 s). */
  readonly retryMs?: number;
  /** How often full buckets are swept (default 60 s). */
  readonly sweepMs?: number;
  /** Told once when the shared store fails (requests are then limited in process). */
  readonly onFailure?: (error: Error) => void;
  /** Told once when the shared store answers again after a failure. */
  readonly onRecovery?: () => void;
  /** The clock of the failure back-off (tests). */
  readonly now?: () => number;
}

/**
 * The shared limits of one server. If the shared store fails or is slower than `timeoutMs`, a
 * request is limited by the in-process limiter given for it (each server then applies the
 * configured rate alone, as without shared limits: neither everything through nor everything
 * refused), `onFailure` is told once, and the shared store is tried again `retryMs` later.
 */
export class SharedLimits {
  readonly #backend: LimitBackend;
  readonly #timeoutMs: number;
  readonly #retryMs: number;
  readonly #options: SharedLimitsOptions;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;
  #failing = false;
  #localUntil = 0;

  constructor(backend: LimitBackend, options: SharedLimitsOptions = {}) {
    this.#backend = backend;
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? 500;
    this.#retryMs = options.retryMs ?? SHARED_LIMITS_RETRY_MS;
    this.#now = options.now ?? (() => performance.now());
    // A failed sweep is tried again at the next one.
    this.#sweeper = setInterval(
      () => void backend.sweep().catch(() => undefined),
      options.sweepMs ?? 60_000,
    );
    this.#sweeper.unref();
  }

  /** True while requests are limited in process because the shared store failed. */
  get failing(): boolean {
    return this.#failing;
  }

  /**
   * A limiter whose buckets are shared: `bucketOf` names a key's bucket (unique across
   * limiters, e.g. `key:<hash>`); `local` limits while the shared store fails.
   */
  limiter(
    rate: LimitRate,
    bucketOf: (key: string) => string,
    local: RequestLimiter,
  ): RequestLimiter {
    const intervalMs = 60_000 / rate.perMinute;
    const toleranceMs = (burstOf(rate) - 1) * intervalMs;
    const seconds = (aheadMs: number) =>
      aheadMs - toleranceMs <= 0 ? 0 : Math.max(1, Math.ceil((aheadMs - toleranceMs) / 1000));
    return {
      take: (key) =>
        this.#shared(
          async () => {
            const taken = await this.#backend.take(bucketOf(key), intervalMs, toleranceMs);
            return taken.admitted ? 0 : Math.max(1, seconds(taken.aheadMs));
          },
          () => local.take(key),
        ),
      waitSeconds: (key) =>
        this.#shared(
          async () => seconds(await this.#backend.aheadMs(bucketOf(key))),
          () => local.waitSeconds(key),
        ),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#backend.close();
  }

  async #shared(
    work: () => Promise<number>,
    local: () => number | Promise<number>,
  ): Promise<number> {
    if (this.#localUntil > this.#now()) return local();
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        work(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the shared limits did not answer in ${this.#timeoutMs} ms`)),
            this.#timeoutMs,
          );
        }),
      ]);
      if (this.#failing) {
        this.#failing = false;
        this.#options.onRecovery?.();
      }
      return answer;
    } catch (error) {
      this.#localUntil = this.#now() + this.#retryMs;
      if (!this.#failing) {
        this.#failing = true;
        this.#options.onFailure?.(error instanceof Error ? error : new Error(String(error)));
      }
      return local();
    } finally {
      clearTimeout(timer);
    }
  }
}
