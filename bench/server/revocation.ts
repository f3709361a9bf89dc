// How soon a revoked API key is refused by a PostgreSQL server that keeps valid keys
// (docs/server/README.md, "API keys"): the time from `revokeApiKey` returning (in another pool, as
// `verbatim keys revoke` would) until the server's key lookup refuses the key, beside one
// round trip to the database (`select 1`) measured in the same run.
// Run: node bin/run-ts.js bench/server/revocation.ts [--pg-url URL] [--count N]
import { parseArgs } from "node:util";
import pg from "pg";
import { openApiKeyLookup } from "../../packages/server/src/gateway/keys/api-key-cache.js";
import { createApiKey, revokeApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";

const { values } = parseArgs({
  options: { "pg-url": { type: "string" }, count: { type: "string", default: "100" } },
});
const url =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const count = Number(values.count);
const schema = `verbatim_bench_revocation_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`create schema ${schema}`);
const percentile = (samples: number[], p: number) =>
  [...samples].sort((a, b) => a - b)[
    Math.min(samples.length - 1, Math.floor(samples.length * p))
  ] ?? Number.NaN;
try {
  const server = await openDatabase({ dialect: "postgres", url, schema });
  const cli = await openDatabase({ dialect: "postgres", url, schema });
  await migrateDatabase(server);
  const keys = await openApiKeyLookup(server);
  const refusedAfter: number[] = [];
  const roundTrips: number[] = [];
  try {
    if (!keys.caching) throw new Error("the lookup does not listen for key changes");
    for (let index = 0; index < count; index++) {
      const { key } = await createApiKey(cli, "bench-subject");
      // Seen twice: kept.
      await keys.subjectOf(key);
      await keys.subjectOf(key);
      await revokeApiKey(cli, key);
      const started = performance.now();
      while ((await keys.subjectOf(key)) !== undefined) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      refusedAfter.push(performance.now() - started);
      const trip = performance.now();
      await server.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
      roundTrips.push(performance.now() - trip);
    }
  } finally {
    await keys.close();
    await server.close();
    await cli.close();
  }
  const p50 = percentile(refusedAfter, 0.5);
  const trip50 = percentile(roundTrips, 0.5);
  process.stdout.write(
    `${count} revocations: refused ${p50.toFixed(3)} ms after revokeApiKey returned at p50, ` +
      `${percentile(refusedAfter, 0.99).toFixed(3)} ms at p99, ${Math.max(...refusedAfter).toFixed(3)} ms at most; ` +
      `one database round trip ${trip50.toFixed(3)} ms at p50 (ratio ${(p50 / trip50).toFixed(2)})\n`,
  );
} finally {
  await admin.query(`drop schema ${schema} cascade`);
  await admin.end();
}
