// One durable finish (the UPDATE of an in_progress message, fsynced) three ways, after the
// process sat idle 20 ms as a server does while a model thinks, and back to back: built and
// compiled by Kysely's builder each time (the baseline), as a query template
// (src/store/query-template.ts: compiled once, run with new values), and as a statement of
// better-sqlite3 alone (the floor). Run: node bin/run-ts.js bench/store/query-template.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { finishMessageRow } from "../../packages/server/src/store/repositories/gateway-messages.js";

const SAMPLES = 100;
const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-template-"));
const path = join(folder, "bench.sqlite");
const database = await openDatabase({ dialect: "sqlite", path });
try {
  await migrateDatabase(database);
  const store = new GatewayMessageStore(database);
  const ids: string[] = [];
  for (let index = 0; index < SAMPLES * 6; index++) {
    const [started] = await store.appendMessages("bench", {
      previousMessageId: null,
      messages: [{ role: "assistant", content: [], status: "in_progress" }],
    });
    ids.push(started?.id ?? "");
  }
  const raw = new Database(path);
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = FULL");
  const statement = raw.prepare(
    "update ai_gateway_messages set status = ?, content = ?, metadata = ?, updated_at = ? " +
      "where id = ? and subject_uid = ? and status = 'in_progress'",
  );
  const final = () => ({
    status: "completed",
    content: '[{"text":"The answer is forty-two.","type":"text"}]',
    metadata: '{"caller":{},"gateway":{"model":"m"}}',
    updated_at: new Date().toISOString(),
  });
  const ways: [string, (id: string) => Promise<unknown>][] = [
    [
      "Kysely builder, compiled each time (baseline)",
      (id) =>
        database.db
          .updateTable("ai_gateway_messages")
          .set(final())
          .where("id", "=", id)
          .where("subject_uid", "=", "bench")
          .where("status", "=", "in_progress")
          .executeTakeFirst(),
    ],
    [
      "query template (finishMessageRow)",
      (id) => finishMessageRow(database.db, "bench", id, final()),
    ],
    [
      "better-sqlite3 alone (floor)",
      async (id) => {
        const f = final();
        return statement.run(f.status, f.content, f.metadata, f.updated_at, id, "bench");
      },
    ],
  ];
  let next = 0;
  const lines: string[] = [];
  for (const idleMs of [20, 0]) {
    // The ways take turns, sample by sample, so a checkpoint or a busy moment hits all alike.
    const samples: number[][] = ways.map(() => []);
    for (let index = 0; index < SAMPLES; index++) {
      for (const [position, [, run]] of ways.entries()) {
        if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
        const id = ids[next++] ?? "";
        const started = performance.now();
        await run(id);
        samples[position]?.push(performance.now() - started);
      }
    }
    const p50s = samples.map((taken) => {
      const sorted = [...taken].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    });
    const baseline = p50s[0] ?? Number.NaN;
    for (const [position, [name]] of ways.entries()) {
      const p50 = p50s[position] ?? Number.NaN;
      lines.push(
        `| ${idleMs === 0 ? "back to back" : `after ${idleMs} ms idle`} | ${name} | ${p50.toFixed(3)} ms | ${(p50 / baseline).toFixed(2)}× |`,
      );
    }
  }
  raw.close();
  process.stdout.write(
    `one durable finish UPDATE on SQLite (synchronous=FULL), p50 of ${SAMPLES}\n\n` +
      "| when | how | p50 | vs the builder |\n| --- | --- | ---: | ---: |\n" +
      `${lines.join("\n")}\n`,
  );
} finally {
  await database.close();
  rmSync(folder, { recursive: true, force: true });
}
