// What the shared rate limits add to a request (docs/scale.md, "Limits across servers"): p50
// and p90 of a small authenticated read (GET /v1/conversations/<missing id>) over HTTP, one at a
// time, on one PostgreSQL database with the limits kept in process and shared through the
// table `verbatim_rate_limits`, the two servers taking turns in blocks of requests.
// Run: node bin/run-ts.js bench/server/shared-limits.ts [--pg-url URL] [--requests N]
import { Agent, request as httpRequest } from "node:http";
import { parseArgs } from "node:util";
import pg from "pg";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { buildServer } from "../../packages/server/src/server/app.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: { "pg-url": { type: "string" }, requests: { type: "string", default: "4000" } },
});
const url =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const requests = Number(values.requests);
const BLOCK = 200;
const schema = `verbatim_bench_limits_${process.pid}`;

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`create schema ${schema}`);
const database = await openDatabase({ dialect: "postgres", url, schema }, { poolSize: 10 });
try {
  await migrateDatabase(database);
  const { key } = await createApiKey(database, "subject-bench");
  const rateLimit = { perMinute: 1_000_000, burst: 1_000_000 };
  const start = async (sharedLimits: boolean) => {
    const app = await buildServer({
      database,
      operatorToken: "vop_bench",
      webRoot: false,
      consoleWorker: false,
      rateLimit,
      ...(sharedLimits ? {} : { sharedLimits: false }),
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    if (typeof address !== "object" || address === null) throw new Error("no address");
    return { app, port: address.port };
  };
  const servers = { local: await start(false), shared: await start(true) };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const began = performance.now();
      const outgoing = httpRequest(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/conversations/conv_missing",
          agent,
          headers: { authorization: `Bearer ${key}` },
        },
        (response) => {
          response.resume();
          response.on("end", () => {
            if (response.statusCode === 429 || response.statusCode === 401) {
              reject(new Error(`unexpected ${response.statusCode}`));
            } else resolve(performance.now() - began);
          });
        },
      );
      outgoing.on("error", reject);
      outgoing.end();
    });
  const times: Record<keyof typeof servers, number[]> = { local: [], shared: [] };
  // Warm-up: connections, prepared statements, JIT.
  for (let index = 0; index < 300; index++) {
    await once(servers.local.port);
    await once(servers.shared.port);
  }
  for (let done = 0; done < requests; done += BLOCK) {
    for (const name of ["local", "shared"] as const) {
      for (let index = 0; index < BLOCK; index++) times[name].push(await once(servers[name].port));
    }
  }
  const quantile = (list: number[], q: number) =>
    [...list].sort((a, b) => a - b)[Math.floor(q * (list.length - 1))]!;
  for (const name of ["local", "shared"] as const) {
    console.log(
      `${name.padEnd(7)} p50 ${quantile(times[name], 0.5).toFixed(3)} ms  p90 ${quantile(times[name], 0.9).toFixed(3)} ms  (${times[name].length} requests)`,
    );
  }
  console.log(
    `added by the shared limits: p50 ${(quantile(times.shared, 0.5) - quantile(times.local, 0.5)).toFixed(3)} ms, p90 ${(quantile(times.shared, 0.9) - quantile(times.local, 0.9)).toFixed(3)} ms`,
  );
  agent.destroy();
  await servers.local.app.close();
  await servers.shared.app.close();
} finally {
  await database.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.end();
}
