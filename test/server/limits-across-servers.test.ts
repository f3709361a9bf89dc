/**
 * Issue 34 item 3: the per-key rate limit and the failed-authentication limit hold across the
 * servers of one PostgreSQL database (docs/scale.md, "Limits across servers"), kept in its
 * table or, with `VERBATIM_REDIS_URL`, in Redis. Three real `verbatim serve` processes on one
 * database; one key hammered across them is admitted at its configured rate ±10% (not three
 * times it); failed authentications are counted across them; a server whose Redis is down
 * starts and limits in process. Redis comes from VERBATIM_TEST_REDIS_URL (.ci/run starts
 * `redis-server`); without it, or without VERBATIM_PG_URL, those cases are skipped with a notice.
 */
import { randomInt } from "node:crypto";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { startServeChild, withoutProviderKeys, type ServeChild } from "../cli/serve-child.js";
import { freshDatabase, postgresUrl, type FreshDatabase } from "../support/databases.js";
import { SHARED_LIMITS_RETRY_MS } from "../../packages/server/src/gateway/limits/shared-limits.js";
import { hammer, serversFellBack, sharedLimitFailures } from "../support/hammer.js";
import { freePort } from "../support/free-port.js";

const redisUrl = process.env["VERBATIM_TEST_REDIS_URL"] || undefined;
for (const [missing, what] of [
  [postgresUrl === undefined, "VERBATIM_PG_URL is not set: the limits across servers"],
  [redisUrl === undefined, "VERBATIM_TEST_REDIS_URL is not set: the limits kept in Redis"],
] as const) {
  if (missing) {
    process.stderr.write(
      `\n[notice] ${what} (issue 34 item 3) are SKIPPED (.ci/run sets both: VERBATIM_PG_URL=postgres://postgres@127.0.0.1:5432/test, VERBATIM_TEST_REDIS_URL=redis://127.0.0.1:6379).\n\n`,
    );
  }
}

const PER_MINUTE = 1200;
const BURST = 20;
const FAILURES = 5;

/** A server's log line written before its answer may reach this process's pipe after it. */
const logsArrived = () => new Promise((resolve) => setTimeout(resolve, 200));

function serve(db: string, env: Record<string, string>): Promise<ServeChild> {
  return startServeChild(["--db", db], {
    ...withoutProviderKeys(process.env),
    VERBATIM_WEB_BUILD: "off",
    ...env,
  });
}

async function redisKeys(pattern: string): Promise<string[]> {
  const redis = createClient({ url: redisUrl ?? "" });
  await redis.connect();
  try {
    return await redis.keys(pattern);
  } finally {
    await redis.close();
  }
}

/** The most rate-limit keys Redis held at once, looked at each second until `done` settles. */
async function keysWhile(done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.finally(() => (settled = true)).catch(() => undefined);
  let most = 0;
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (!settled) most = Math.max(most, (await redisKeys("verbatim:limits:key:*")).length);
  }
  return most;
}

for (const store of ["postgres", "redis"] as const) {
  const skip = postgresUrl === undefined || (store === "redis" && redisUrl === undefined);
  describe.skipIf(skip)(
    `issue 34 item 3: limits across three servers [${store}]`,
    { timeout: 180_000 },
    () => {
      let fresh: FreshDatabase;
      let servers: ServeChild[] = [];
      beforeAll(async () => {
        fresh = await freshDatabase("postgres");
        const env = {
          ...(store === "redis" ? { VERBATIM_REDIS_URL: redisUrl ?? "" } : {}),
          VERBATIM_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
          VERBATIM_RATE_LIMIT_BURST: String(BURST),
          VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE: String(FAILURES),
          // The client's address is the forwarded one: one of its own for each run.
          VERBATIM_TRUST_PROXY: "loopback",
          VERBATIM_PG_POOL_MAX: "5",
        };
        servers = await Promise.all([1, 2, 3].map(() => serve(fresh.locationText, env)));
      });
      afterAll(async () => {
        await Promise.all(servers.map((server) => server.stop()));
        await fresh?.cleanup();
      });

      it(`issue 34 item 3: one key hammered across three servers is admitted at its rate ±10% [${store}]`, async () => {
        const { key } = await createApiKey(fresh.database, "subject-hammered");
        const from = Date.now();
        const hammering = hammer(
          servers.map((server) => server.url),
          { authorization: `Bearer ${key}` },
          { durationMs: 5_000, concurrency: 9 },
        );
        // In Redis a full bucket is no key (it expires when its tokens are back, a second after
        // the hammer stops), so the key is looked for while it is hammered.
        const redisKeysSeen = store === "redis" ? await keysWhile(hammering) : 0;
        const result = await hammering;
        const to = Date.now();
        await logsArrived();
        expect(result.unauthorized).toBe(0);
        // A server whose shared store did not answer in 500 ms limits on its own for 5 s (the
        // documented fall-back, a busy machine's): it may admit one server's bucket more.
        const fellBack = serversFellBack(
          servers.map((server) => server.stderr()),
          { from, to },
        );
        // The bucket's burst, then the rate over the time the requests were sent: what the
        // three admit together, and what one server falling back admits on its own.
        const expected = BURST + (PER_MINUTE / 60_000) * result.elapsedMs;
        const high = Math.ceil(expected * 1.1 + fellBack.filter(Boolean).length * expected);
        process.stderr.write(
          `[issue 34 item 3, ${store}] admitted ${result.admitted} (at most ${high}), limited ${result.limited} in ${Math.round(result.elapsedMs)} ms; per server ${JSON.stringify(result.perServer)}; fell back ${JSON.stringify(fellBack)}\n`,
        );
        expect(result.admitted).toBeGreaterThanOrEqual(Math.floor(expected * 0.9));
        expect(result.admitted).toBeLessThanOrEqual(high);
        // Every server admitted some, and every one that kept to the shared bucket refused
        // some: the bucket is one, not three.
        result.perServer.forEach((counts, index) => {
          expect(counts.admitted).toBeGreaterThan(0);
          if (!fellBack[index]) expect(counts.limited).toBeGreaterThan(0);
        });
        expect(fellBack.every(Boolean)).toBe(false);
        // Kept where configured, and only there.
        const rows = await fresh.database.db
          .selectFrom("verbatim_rate_limits")
          .select("bucket")
          .execute();
        if (store === "postgres") expect(rows.length).toBeGreaterThan(0);
        else {
          expect(rows).toEqual([]);
          expect(redisKeysSeen).toBeGreaterThan(0);
        }
      });

      it(`issue 34 item 3: failed authentications are counted across the servers [${store}]`, async () => {
        const lastFailure = () =>
          Math.max(0, ...servers.flatMap((server) => sharedLimitFailures(server.stderr())));
        // A run whose shared store missed its 500 ms (and so counted on its own) is run again
        // once every server is back on the shared store, with a new address; at most 3 runs.
        for (let run = 1; ; run++) {
          const wait = lastFailure() + SHARED_LIMITS_RETRY_MS + 500 - Date.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const from = Date.now();
          const address = `198.51.100.${randomInt(1, 255)}`;
          const statuses: number[] = [];
          for (let index = 0; index < FAILURES * 2; index++) {
            const server = servers[index % servers.length]!;
            const response = await fetch(`${server.url}/v1/conversations/conv_missing`, {
              headers: { authorization: `Bearer vbk_wrong-${index}`, "x-forwarded-for": address },
            });
            await response.arrayBuffer();
            statuses.push(response.status);
          }
          // A valid key from the blocked address is refused too, on every server.
          const { key } = await createApiKey(fresh.database, `subject-after-failures-${run}`);
          const refusals: { status: number; code: string; retryAfter: number }[] = [];
          for (const server of servers) {
            const response = await fetch(`${server.url}/v1/conversations/conv_missing`, {
              headers: { authorization: `Bearer ${key}`, "x-forwarded-for": address },
            });
            const body = (await response.json()) as { error?: { code: string } };
            refusals.push({
              status: response.status,
              code: body.error?.code ?? "",
              retryAfter: Number(response.headers.get("retry-after")),
            });
          }
          await logsArrived();
          if (lastFailure() >= from && run < 3) {
            process.stderr.write(
              `[issue 34 item 3, ${store}] run ${run} of the failed authentications: a shared store missed its 500 ms, run again\n`,
            );
            continue;
          }
          // Per process, each of the three would have allowed FAILURES before refusing.
          expect(statuses).toEqual([...Array(FAILURES).fill(401), ...Array(FAILURES).fill(429)]);
          for (const refusal of refusals) {
            expect(refusal.status).toBe(429);
            expect(refusal.code).toBe("authentication_rate_limited");
            expect(refusal.retryAfter).toBeGreaterThan(0);
          }
          return;
        }
      });
    },
  );
}

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 3: a server whose Redis is down",
  { timeout: 120_000 },
  () => {
    let fresh: FreshDatabase;
    let server: ServeChild | undefined;
    beforeAll(async () => {
      fresh = await freshDatabase("postgres");
    });
    afterAll(async () => {
      await server?.stop();
      await fresh?.cleanup();
    });

    it("issue 34 item 3: starts, limits in process (neither all through nor all refused) and logs it", async () => {
      server = await serve(fresh.locationText, {
        // Nothing listens there.
        VERBATIM_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        VERBATIM_RATE_LIMIT_PER_MINUTE: "60",
        VERBATIM_RATE_LIMIT_BURST: "3",
      });
      const { key } = await createApiKey(fresh.database, "subject-without-redis");
      const statuses: number[] = [];
      for (let index = 0; index < 5; index++) {
        const response = await fetch(`${server.url}/v1/conversations/conv_missing`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      expect(statuses.slice(0, 3)).not.toContain(429);
      expect(statuses.slice(3)).toEqual([429, 429]);
      expect(server.stderr()).toContain("the shared rate limits failed");
    });
  },
);
