import { expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  describeEachDialect,
  freshDatabase,
  postgresUrl,
  uniqueName,
  type TestDialect,
} from "../support/databases.js";
import { startGatedWorker } from "../support/gated-worker.js";

const WORKERS = 4;
const COUNT = 25;

interface WorkerResult {
  own: string[];
  shared: string[];
  forks: string[];
  keyed: string[];
}

function startWorker(args: string[]) {
  return startGatedWorker<WorkerResult>("test/gateway/concurrent-append-worker.ts", args);
}

async function runConcurrently(dialect: TestDialect) {
  const fresh = await freshDatabase(dialect);
  try {
    const store = new GatewayMessageStore(fresh.database);
    const subject = uniqueName("subject");
    const [sharedRoot] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "shared root" }] }],
    });
    const rootId = sharedRoot?.id ?? "";
    const workers = Array.from({ length: WORKERS }, (_, index) =>
      startWorker([fresh.locationText, subject, `w${index}`, rootId, String(COUNT)]),
    );
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    const results = await Promise.all(workers.map((worker) => worker.done));

    // no message lost or duplicated: the table holds exactly what the workers were given
    const rows = await fresh.database.db
      .selectFrom("ai_gateway_messages")
      .select(["id", "previous_message_id", "branch_id", "depth"])
      .where("subject_uid", "=", subject)
      .execute();
    const given = results.flatMap((result) => [...result.own, ...result.shared, ...result.forks]);
    const keyed = new Set(results.flatMap((result) => result.keyed));
    expect(new Set(given).size).toBe(given.length);
    expect(keyed.size).toBe(COUNT);
    expect(rows.length).toBe(1 + given.length + COUNT);
    expect(new Set(rows.map((row) => row.id))).toEqual(new Set([rootId, ...given, ...keyed]));
    // every worker saw the same message for each idempotency key
    for (const result of results) expect(result.keyed).toEqual(results[0]?.keyed);

    // every chain is intact: each context is exactly the worker's messages in order
    for (const [index, result] of results.entries()) {
      const own = await store.readContext(subject, result.own[COUNT - 1] ?? "");
      expect(own.messages.map((message) => message.id)).toEqual(result.own);
      const shared = await store.readContext(subject, result.shared[COUNT - 1] ?? "");
      expect(shared.messages.map((message) => message.id)).toEqual([rootId, ...result.shared]);
      expect(
        shared.messages.map((m) => (m.content[0]?.type === "text" ? m.content[0].text : "")),
      ).toEqual([
        "shared root",
        ...Array.from({ length: COUNT }, (_, n) => `w${index} shared ${n}`),
      ]);
      for (const fork of result.forks) {
        const context = await store.readContext(subject, fork);
        expect(context.messages.map((message) => message.id)).toEqual([rootId, fork]);
      }
    }
    const continuations = await store.listContinuations(subject, rootId);
    expect(continuations.length).toBe(WORKERS + WORKERS * COUNT + COUNT);
    // depths follow the chain everywhere
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const row of rows) {
      const previous =
        row.previous_message_id === null ? undefined : byId.get(row.previous_message_id);
      expect(row.depth).toBe(previous === undefined ? 0 : previous.depth + 1);
    }
  } finally {
    await fresh.cleanup();
  }
}

describeEachDialect("concurrent appends from several processes", (_getDatabase, dialect) => {
  it.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `B4 ${WORKERS} processes appending to the same and to different conversations keep every chain intact`,
    () => runConcurrently(dialect),
    120_000,
  );
});
