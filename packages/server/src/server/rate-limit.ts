import { burstOf, type LimitRate, type RequestLimiter } from "../gateway/limits/shared-limits.js";

/**
 * A rate limit: each key may send `perMinute` requests a minute, in bursts of up to `burst`
 * (default a tenth of a minute's). Kept per server on SQLite, shared by the servers of a
 * PostgreSQL database (docs/scale.md, "Limits across servers").
 */
export type RateLimitOptions = LimitRate;

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * A per-key token bucket in the memory of one server process. On SQLite (one host) this is
 * the limit; on PostgreSQL (or with Redis) the servers share their buckets
 * (gateway/limits/shared-limits.ts) and this one limits only while the shared store fails.
 */
export class RateLimiter implements RequestLimiter {
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(options: RateLimitOptions, now: () => number = () => performance.now()) {
    this.#ratePerMs = options.perMinute / 60_000;
    this.#burst = burstOf(options);
    this.#now = now;
  }

  /** Takes one token; returns 0 when allowed, else the seconds until one is free. */
  take(key: string): number {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.#burst, updatedMs: now };
      this.#buckets.set(key, bucket);
      if (this.#buckets.size > 100_000) this.#forgetFull(now);
    } else {
      bucket.tokens = Math.min(
        this.#burst,
        bucket.tokens + (now - bucket.updatedMs) * this.#ratePerMs,
      );
      bucket.updatedMs = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#ratePerMs / 1000));
  }

  /** The seconds until `key` may take a token (0: it may now), without taking one. */
  waitSeconds(key: string): number {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return 0;
    const tokens = Math.min(
      this.#burst,
      bucket.tokens + (this.#now() - bucket.updatedMs) * this.#ratePerMs,
    );
    if (tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - tokens) / this.#ratePerMs / 1000));
  }

  #forgetFull(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      const tokens = bucket.tokens + (now - bucket.updatedMs) * this.#ratePerMs;
      if (tokens >= this.#burst) this.#buckets.delete(key);
    }
  }
}
