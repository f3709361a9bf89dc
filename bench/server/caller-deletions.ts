// What the tombstone check costs a continued response (docs/server/responses.md, "DELETE
// /v1/responses/:id"): every POST /v1/responses with previous_response_id (and every read of a
// response by id) first asks whether the subject deleted the response or its conversation, in
// one statement (isMessageOrItsConversationDeleted). Measured beside the read every
// continuation makes anyway, the anchor's row by id (findAnchor), in alternating blocks of the
// same run, on SQLite (a file) and on PostgreSQL; 1,000 tombstones of the subject are stored.
// Run: node bin/run-ts.js bench/server/caller-deletions.ts [--pg-url URL] [--no-pg] [--count N]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import {
  insertCallerDeletion,
  isMessageOrItsConversationDeleted,
} from "../../packages/server/src/store/repositories/gateway-caller-deletions.js";
import { findAnchor } from "../../packages/server/src/store/repositories/gateway-messages.js";

const { values } = parseArgs({
  options: {
    "pg-url": { type: "string" },
    "no-pg": { type: "boolean", default: false },
    count: { type: "string", default: "4000" },
  },
});
const count = Number(values.count);
const pgUrl =
  values["pg-url"] ?? process.env["VERBATIM_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const BLOCK = 100;

const percentile = (samples: number[], p: number) =>
  [...samples].sort((a, b) => a - b)[
    Math.min(samples.length - 1, Math.floor(samples.length * p))
  ] ?? Number.NaN;

async function measure(name: string, location: DatabaseLocation): Promise<string> {
  const database = await openDatabase(location);
  try {
    await migrateDatabase(database);
    const store = new GatewayMessageStore(database, { cacheBytes: 0 });
    const subject = "bench-subject";
    let previous: string | null = null;
    const ids: string[] = [];
    for (let index = 0; index < 200; index++) {
      const [message] = await store.appendMessages(subject, {
        previousMessageId: previous,
        messages: [{ role: "user", content: [{ type: "text", text: `message ${index}` }] }],
      });
      if (message === undefined) throw new Error("append returned nothing");
      ids.push(message.id);
      previous = message.id;
    }
    for (let index = 0; index < 1000; index++) {
      await insertCallerDeletion(database.db, {
        subjectUid: subject,
        objectId: `msg_deleted_${index}`,
        kind: "response",
        deletedAt: new Date().toISOString(),
      });
    }
    const check: number[] = [];
    const anchor: number[] = [];
    for (let block = 0; block < count / BLOCK; block++) {
      for (const [samples, run] of [
        [check, (id: string) => isMessageOrItsConversationDeleted(database.db, subject, id)],
        [anchor, (id: string) => findAnchor(database.db, subject, id)],
      ] as const) {
        for (let index = 0; index < BLOCK; index++) {
          const id = ids[(block * BLOCK + index) % ids.length] ?? "";
          const start = performance.now();
          await run(id);
          samples.push(performance.now() - start);
        }
      }
    }
    const p50 = percentile(check, 0.5);
    const base = percentile(anchor, 0.5);
    return (
      `| ${name} | ${base.toFixed(3)} | ${p50.toFixed(3)} | ${percentile(check, 0.99).toFixed(3)} | ` +
      `${(p50 / base).toFixed(2)} |`
    );
  } finally {
    await database.close();
  }
}

const lines = [
  `tombstone check vs the anchor read, ${count} of each (ms):`,
  "",
  "| database | anchor read p50 | tombstone check p50 | tombstone check p99 | ratio of p50s |",
  "| --- | ---: | ---: | ---: | ---: |",
];
const directory = mkdtempSync(join(tmpdir(), "verbatim-bench-deletions-"));
try {
  lines.push(await measure("SQLite", { dialect: "sqlite", path: join(directory, "bench.db") }));
} finally {
  rmSync(directory, { recursive: true, force: true });
}
if (values["no-pg"] !== true) {
  const schema = `verbatim_bench_deletions_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  try {
    lines.push(await measure("PostgreSQL", { dialect: "postgres", url: pgUrl, schema }));
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}
process.stdout.write(`${lines.join("\n")}\n`);
