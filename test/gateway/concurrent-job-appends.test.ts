import { expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
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
const COUNT = 15;

interface WorkerResult {
  own: [string, number][];
  shared: [string, number][];
}

function startWorker(args: string[]) {
  return startGatedWorker<WorkerResult>("test/gateway/concurrent-job-append-worker.ts", args);
}

async function runConcurrently(dialect: TestDialect) {
  const fresh = await freshDatabase(dialect);
  try {
    const subject = uniqueName("subject");
    const conversation = await new GatewayMessageStore(fresh.database).createConversation(subject);
    const jobs = new BackgroundAgentJobs(fresh.database);
    const job = await jobs.createJob(subject, { conversationId: conversation.id, retryBudget: 0 });
    await jobs.startAttempt(subject, job.id);
    const { turn } = await jobs.startTurn(subject, job.id);
    const workers = Array.from({ length: WORKERS }, (_, index) =>
      startWorker([fresh.locationText, subject, `w${index}`, turn.id, String(COUNT)]),
    );
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    const results = await Promise.all(workers.map((worker) => worker.done));

    const stored = (await jobs.readTrajectory(subject, job.id)).rows;
    const total = WORKERS * COUNT * 2 + COUNT;
    // positions contiguous from 0, no item lost or duplicated
    expect(stored.map((row) => row.position)).toEqual(
      Array.from({ length: total }, (_, index) => index),
    );
    expect(new Set(stored.map((row) => row.item_key)).size).toBe(total);
    const positionOf = new Map(stored.map((row) => [row.item_key, row.position]));
    for (const result of results) {
      // what each worker was told is what is stored; each append's two items are adjacent
      for (const [key, position] of result.own) expect(positionOf.get(key)).toBe(position);
      for (let index = 0; index < result.own.length; index += 2) {
        expect((result.own[index + 1]?.[1] ?? 0) - (result.own[index]?.[1] ?? 0)).toBe(1);
      }
      // a key every worker appended is stored once, and every worker got that row
      for (const [key, position] of result.shared) expect(positionOf.get(key)).toBe(position);
    }
    expect((await jobs.getJob(subject, job.id)).status).toBe("running");
  } finally {
    await fresh.cleanup();
  }
}

describeEachDialect("concurrent job appends from several processes", (_getDatabase, dialect) => {
  it.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `B7 ${WORKERS} processes appending to one turn get contiguous positions; a shared key is stored once`,
    () => runConcurrently(dialect),
    120_000,
  );
});
