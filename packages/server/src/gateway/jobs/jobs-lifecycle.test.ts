import { TableNode, sql, type KyselyPlugin, type RootOperationNode } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import type { StoreDatabase } from "../../store/database.js";
import { compressContext } from "../conversations/compression.js";
import { GatewayMessageStore } from "../conversations/message-store.js";
import { BackgroundAgentJobs } from "./job-service.js";

import { say, setup } from "../../../../../test/support/background-jobs.js";

describeEachDialect("background agent jobs: lifecycle and wake events", (getDatabase, dialect) => {
  it("B13 the retry budget bounds the attempts", async () => {
    const { subject, jobs, job } = await setup(getDatabase(), 2);
    expect((await jobs.failAttempt(subject, job.id, "boom 1")).status).toBe("queued");
    await jobs.startAttempt(subject, job.id);
    expect((await jobs.failAttempt(subject, job.id, "boom 2")).status).toBe("queued");
    await jobs.startAttempt(subject, job.id);
    const failed = await jobs.failAttempt(subject, job.id, "boom 3");
    expect(failed).toMatchObject({ status: "failed", attempts: 3 });
    await expect(jobs.startAttempt(subject, job.id)).rejects.toMatchObject({
      code: "job_retry_budget_exhausted",
    });
    const events = await jobs.claimWakeEvents(subject, {
      consumer: uniqueName("consumer"),
      conversationId: job.conversationId,
    });
    expect(events.map((event) => event.payload)).toEqual([
      {
        type: "background_agent_job.ended",
        job_id: job.id,
        status: "failed",
        attempts: 3,
        result: null,
        error: "boom 3",
      },
    ]);
  });

  it("B11 B13 a job's end emits one wake event carrying its result, claimed exactly once", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id, [say("m", "working")]);
    const ended = await jobs.completeJob(subject, job.id, { answer: "v2 shipped 2026-03-01" });
    expect(ended.status).toBe("succeeded");
    expect((await jobs.readTrajectory(subject, job.id)).turns[0]).toMatchObject({
      id: turn.id,
      status: "completed",
    });
    await expect(jobs.completeJob(subject, job.id, null)).rejects.toMatchObject({
      code: "job_state_conflict",
    });
    const claims = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        jobs.claimWakeEvents(subject, {
          consumer: `consumer-${index}`,
          conversationId: job.conversationId,
        }),
      ),
    );
    const claimed = claims.flat();
    expect(claimed).toHaveLength(1);
    expect(claimed[0]).toMatchObject({
      subjectUid: subject,
      conversationId: job.conversationId,
      jobId: job.id,
      payload: {
        status: "succeeded",
        result: { answer: "v2 shipped 2026-03-01" },
        error: null,
        attempts: 1,
      },
    });
    // The wake event carries the result, never the trajectory.
    expect(JSON.stringify(claimed[0]?.payload)).not.toContain("working");
    expect(
      await jobs.claimWakeEvents(subject, { consumer: "late", conversationId: job.conversationId }),
    ).toEqual([]);
  });

  it("B11 many jobs' wake events, claimed by concurrent consumers: each exactly once", async () => {
    const database = getDatabase();
    const { subject, jobs, job } = await setup(database);
    const conversationId = job.conversationId;
    const ids = [job.id];
    for (let index = 0; index < 19; index++) {
      const next = await jobs.createJob(subject, { conversationId, retryBudget: 0 });
      await jobs.startAttempt(subject, next.id);
      ids.push(next.id);
    }
    await Promise.all(
      ids.map((id, index) =>
        index % 2 === 0
          ? jobs.completeJob(subject, id, index)
          : jobs.cancelJob(subject, id, "stop"),
      ),
    );
    const claims = await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        jobs.claimWakeEvents(subject, { consumer: `c${index}`, limit: 3, conversationId }),
      ),
    );
    const rest = await jobs.claimWakeEvents(subject, {
      consumer: "sweeper",
      conversationId,
      limit: 1000,
    });
    const all = [...claims.flat(), ...rest].map((event) => event.jobId);
    expect([...all].sort()).toEqual([...ids].sort());
    if (dialect === "postgres") expect(claims.flat()).toHaveLength(15);
  });

  it("B11 jobs never write to ai_gateway_messages", async () => {
    const database = getDatabase();
    const writes: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery(args) {
        const node = args.node as RootOperationNode;
        const target =
          node.kind === "InsertQueryNode"
            ? node.into?.table.identifier.name
            : node.kind === "UpdateQueryNode" &&
                node.table !== undefined &&
                TableNode.is(node.table)
              ? node.table.table.identifier.name
              : node.kind === "DeleteQueryNode"
                ? JSON.stringify(node.from)
                : undefined;
        if (target !== undefined) writes.push(target);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const recorded: StoreDatabase = { ...database, db: database.db.withPlugin(recorder) };
    const subject = uniqueName("subject");
    const gateway = new GatewayMessageStore(database);
    const [message] = await gateway.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "start a job" }] }],
    });
    const snapshot = async () =>
      JSON.stringify(
        await database.db
          .selectFrom("ai_gateway_messages")
          .selectAll()
          .where("subject_uid", "=", subject)
          .orderBy("id")
          .execute(),
      );
    const before = await snapshot();
    const count = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
            database.db,
          )
        ).rows[0]?.n,
      );
    const countBefore = await count();

    const jobs = new BackgroundAgentJobs(recorded);
    const job = await jobs.createJob(subject, {
      conversationId: message?.conversationId ?? "",
      retryBudget: 1,
    });
    await jobs.startAttempt(subject, job.id);
    const { turn } = await jobs.startTurn(subject, job.id, [
      { item_key: "client:go", item: { type: "user_message", text: "go" } },
    ]);
    await jobs.appendItems(subject, turn.id, [say("a", "thinking")]);
    await jobs.failAttempt(subject, job.id, "crash");
    await jobs.startAttempt(subject, job.id);
    const { turn: second } = await jobs.startTurn(subject, job.id);
    await jobs.steerTurn(subject, second.id, [
      { item_key: "client:more", item: { type: "user_message", text: "more" } },
    ]);
    await jobs.completeJob(subject, job.id, "done");
    await jobs.claimWakeEvents(subject, { consumer: "c", conversationId: job.conversationId });
    await jobs.chatmlTrajectory(subject, job.id);

    expect(writes.length).toBeGreaterThan(10);
    expect(writes.filter((table) => table.startsWith("ai_gateway"))).toEqual([]);
    expect(new Set(writes)).toEqual(
      new Set([
        "background_agent_jobs",
        "background_agent_job_turns",
        "background_agent_job_turn_items",
        "background_agent_job_wake_events",
      ]),
    );
    expect(await snapshot()).toBe(before);
    expect(await count()).toBe(countBefore);
  });

  it("B13 jobs are never compressed: compressing the owning conversation leaves the trajectory whole", async () => {
    const { subject, gateway, jobs, job, anchor } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    const many = Array.from({ length: 300 }, (_, index) =>
      say(`m${index}`, `step ${index} ${"x".repeat(200)}`),
    );
    await jobs.appendItems(subject, turn.id, many);
    const before = await jobs.readTrajectory(subject, job.id);
    await compressContext(gateway, subject, {
      anchorId: anchor,
      summary: "The user asked for research; a job runs.",
    });
    const after = await jobs.readTrajectory(subject, job.id);
    expect(after.rows).toEqual(before.rows);
    expect(after.rows).toHaveLength(300);
    expect((await jobs.chatmlTrajectory(subject, job.id)).messages).toHaveLength(300);
    expect("compress" in jobs).toBe(false);
  });

  it("scopes every read and write to the subject", async () => {
    const { jobs, job } = await setup(getDatabase());
    const other = uniqueName("other");
    await expect(jobs.getJob(other, job.id)).rejects.toMatchObject({ code: "job_not_found" });
    await expect(jobs.startTurn(other, job.id)).rejects.toMatchObject({ code: "job_not_found" });
    await expect(
      jobs.createJob(other, { conversationId: job.conversationId, retryBudget: 0 }),
    ).rejects.toMatchObject({
      code: "gateway_conversation_not_found",
    });
    await expect(
      jobs.createJob(job.subjectUid, { conversationId: job.conversationId, retryBudget: -1 }),
    ).rejects.toMatchObject({
      code: "gateway_input_invalid",
    });
  });
});
