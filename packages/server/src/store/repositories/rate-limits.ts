import { sql, type Kysely } from "kysely";
import { queryTemplate } from "../query-template.js";
import type { StoreSchema } from "../schema.js";

/**
 * The shared rate limits of PostgreSQL (migration 0018): each bucket is a generic cell rate
 * algorithm, one number per bucket, `tat_ms`, the time (database clock, ms) its tokens are all
 * back. A request at `now` is admitted when `max(tat, now) - now <= toleranceMs` and moves
 * `tat` to `max(tat, now) + intervalMs`; a refused one leaves it. With `intervalMs` = 60000 /
 * per minute and `toleranceMs` = (burst - 1) × `intervalMs`, that is a token bucket of `burst`
 * tokens refilled `perMinute` a minute. The clock is the database's: servers with skewed clocks
 * share one.
 */
export interface RateLimitTake {
  readonly admitted: boolean;
  /** How far `tat` is ahead of now after the statement, in ms (the wait is this − tolerance). */
  readonly aheadMs: number;
}

const NOW_MS = sql`(extract(epoch from clock_timestamp()) * 1000)::float8`;

/** Takes one token from `bucket` if it has one: one statement, one round trip, atomic. */
const takeQuery = queryTemplate<[string, number, number], { admitted: boolean; ahead_ms: number }>(
  (_db, slot) => sql`with clock as (select ${NOW_MS} as now_ms)
    insert into verbatim_rate_limits as b (bucket, tat_ms, admitted)
    select ${slot(0)}, clock.now_ms + ${slot(1)}::float8, true from clock
    on conflict (bucket) do update set
      admitted = greatest(b.tat_ms, excluded.tat_ms - ${slot(1)}::float8)
        <= excluded.tat_ms - ${slot(1)}::float8 + ${slot(2)}::float8,
      tat_ms = case
        when greatest(b.tat_ms, excluded.tat_ms - ${slot(1)}::float8)
          <= excluded.tat_ms - ${slot(1)}::float8 + ${slot(2)}::float8
        then greatest(b.tat_ms, excluded.tat_ms - ${slot(1)}::float8) + ${slot(1)}::float8
        else b.tat_ms end
    returning b.admitted, b.tat_ms - (select now_ms from clock) as ahead_ms`,
);

export async function takeRateLimitToken(
  db: Kysely<StoreSchema>,
  bucket: string,
  intervalMs: number,
  toleranceMs: number,
): Promise<RateLimitTake> {
  const { rows } = await takeQuery.run(db, bucket, intervalMs, toleranceMs);
  const row = rows[0];
  if (row === undefined) throw new Error("the rate limit statement returned no row");
  return { admitted: row.admitted, aheadMs: Number(row.ahead_ms) };
}

/** How far `bucket`'s `tat` is ahead of now, in ms (≤ 0, or no row: its bucket is full). */
const aheadQuery = queryTemplate<[string], { ahead_ms: number }>(
  (_db, slot) =>
    sql`select tat_ms - ${NOW_MS} as ahead_ms from verbatim_rate_limits where bucket = ${slot(0)}`,
);

export async function rateLimitAheadMs(db: Kysely<StoreSchema>, bucket: string): Promise<number> {
  const { rows } = await aheadQuery.run(db, bucket);
  const row = rows[0];
  return row === undefined ? 0 : Number(row.ahead_ms);
}

/**
 * Deletes the rows whose bucket is full again (their `tat` passed more than `graceMs` ago): the
 * same as no row. Run now and then, not per request; returns how many went.
 */
export async function deleteFullRateLimitBuckets(
  db: Kysely<StoreSchema>,
  graceMs: number,
): Promise<number> {
  const result = await sql`delete from verbatim_rate_limits
    where tat_ms < ${NOW_MS} - ${graceMs}::float8`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
