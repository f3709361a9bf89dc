// An API key's lookup on SQLite in process, through the store's connection (`cache: false`)
// and on the lookup's own read connection (the server's default), with nothing else using the
// store: best of 5 rounds of 2,000 lookups (a warm-up round first), microseconds per lookup
// (docs/server/performance.md, "Performance"); then the same lookup made while a transaction holds the
// store's connection for 2 ms (as a recorded call's placing does), p50 of 50, milliseconds.
// `node bin/run-ts.js bench/server/api-key-lookup.ts`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { openApiKeyLookup } from "../../packages/server/src/gateway/keys/api-key-cache.js";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { migrateDatabase, openDatabase } from "../../packages/server/src/store/index.js";

/** Best of 5 timed rounds of `runs` calls (after one untimed round), µs per call. */
async function best(runs: number, step: () => unknown): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < runs; index++) await step();
    if (round > 0) rounds.push(Number(process.hrtime.bigint() - started) / 1e3 / runs);
  }
  return Math.min(...rounds);
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-key-lookup-"));
const database = await openDatabase({ dialect: "sqlite", path: join(folder, "store.sqlite") });
try {
  await migrateDatabase(database);
  const { key } = await createApiKey(database, "bench");
  for (const cache of [false, true]) {
    const keys = await openApiKeyLookup(database, { cache });
    const perLookup = await best(2_000, async () => {
      if ((await keys.subjectOf(key)) !== "bench") throw new Error("wrong subject");
    });
    const waits: number[] = [];
    for (let index = 0; index < 50; index++) {
      let began: () => void = () => undefined;
      const holding = new Promise<void>((resolve) => (began = resolve));
      const transaction = database.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        began();
        await sleep(2);
      });
      await holding;
      const started = performance.now();
      await keys.subjectOf(key);
      waits.push(performance.now() - started);
      await transaction;
    }
    await keys.close();
    const during = [...waits].sort((a, b) => a - b)[25] ?? Number.NaN;
    const how = cache ? "on its own connection" : "through the store's connection";
    process.stdout.write(
      `API key lookup ${how}: ${perLookup.toFixed(1)} µs; while a transaction holds the store's connection: ${during.toFixed(2)} ms p50\n`,
    );
  }
} finally {
  await database.close();
  rmSync(folder, { recursive: true, force: true });
}
