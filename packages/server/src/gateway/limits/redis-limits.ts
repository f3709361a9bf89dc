import type { LimitBackend } from "./shared-limits.js";

/**
 * The Redis backend of the shared limits (`VERBATIM_REDIS_URL`; docs/scale.md, "Limits across
 * servers"): each bucket is one Redis string, `verbatim:limits:<bucket>`, holding its `tat`
 * (the time its tokens are all back, ms of Redis's clock) and expiring at that time, so a full
 * bucket is no key at all and nothing needs sweeping. A take is one script run (atomic in
 * Redis); a look is one PTTL. The client is @redis/client (node-redis's core), loaded only
 * when a Redis URL is set. Commands fail at once while the connection is down (no offline
 * queue): the requests are then limited in process (SharedLimits) while it reconnects.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if tat - now <= tolerance then
  local next = tat + interval
  redis.call('SET', KEYS[1], tostring(next), 'PX', math.max(1, math.ceil(next - now)))
  return {1, tostring(next - now)}
end
return {0, tostring(tat - now)}
`;

const PREFIX = "verbatim:limits:";

export interface RedisLimitsOptions {
  /** Told of connection errors (the client reconnects by itself). */
  readonly onError?: (error: Error) => void;
}

export async function redisLimitBackend(
  url: string,
  options: RedisLimitsOptions = {},
): Promise<LimitBackend> {
  const { createClient } = await import("@redis/client");
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2_000,
      // Doubling from 100 ms up to 5 s, for ever.
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000),
    },
  });
  client.on("error", (error: unknown) =>
    options.onError?.(error instanceof Error ? error : new Error(String(error))),
  );
  // Not awaited: the server starts without Redis and limits in process until it answers.
  void client.connect().catch(() => undefined);
  return {
    async take(bucket, intervalMs, toleranceMs) {
      const reply = (await client.eval(TAKE, {
        keys: [PREFIX + bucket],
        arguments: [String(intervalMs), String(toleranceMs)],
      })) as [number, string];
      return { admitted: reply[0] === 1, aheadMs: Number(reply[1]) };
    },
    async aheadMs(bucket) {
      return Math.max(0, Number(await client.pTTL(PREFIX + bucket)));
    },
    sweep: async () => undefined,
    async close() {
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}
