import { TableNode, sql, type KyselyPlugin, type RootOperationNode } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../test/support/databases.js";
import { workedExampleRows } from "../../../test/support/trajectory-fixtures.js";
import type { StoreDatabase } from "../../store/database.js";
import { modelVisibleJson } from "../../trajectory/model-visible.js";
import { compressContext } from "../compression.js";
import { GatewayMessageStore } from "../message-store.js";
import { BackgroundAgentJobs } from "./job-service.js";
import type { TurnItemInput } from "./job-types.js";

const say = (key: string, text: string): TurnItemInput => ({
  item_key: key,
  item: { type: "agent_message", text },
});

/** A subject with a conversation (holding one exchange) and a running job reporting to it. */
async function setup(database: StoreDatabase, retryBudget = 0) {
  const subject = uniqueName("subject");
  const gateway = new GatewayMessageStore(database);
  const [, answer] = await gateway.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      { role: "user", content: [{ type: "text", text: "Research v2 in the background." }] },
      { role: "assistant", content: [{ type: "text", text: "Started a job." }] },
    ],
  });
  const jobs = new BackgroundAgentJobs(database);
  const job = await jobs.createJob(subject, {
    conversationId: answer?.conversationId ?? "",
    retryBudget,
  });
  await jobs.startAttempt(subject, job.id);
  return { subject, gateway, jobs, job, anchor: answer?.id ?? "" };
}

describeEachDialect("background agent jobs", (getDatabase, dialect) => {
  it("B7 appends items at positions contiguous from 0 with the turn's revision", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn, items } = await jobs.startTurn(subject, job.id, [
      { item_key: "client:prompt", item: { type: "user_message", text: "Go." } },
    ]);
    const more = await jobs.appendItems(subject, turn.id, [say("m1", "one"), say("m2", "two")]);
    expect([...items, ...more].map((row) => [row.position, row.revision, row.item_key])).toEqual([
      [0, 1, "client:prompt"],
      [1, 1, "m1"],
      [2, 1, "m2"],
    ]);
    const stored = await jobs.readTrajectory(subject, job.id);
    expect(stored.rows).toEqual([...items, ...more]);
    expect(stored.turns.map((entry) => [entry.turnIndex, entry.itemCount])).toEqual([[0, 3]]);
  });

  it("B7 concurrent appends to one turn get distinct, contiguous positions", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    const writers = Array.from({ length: 24 }, (_, index) =>
      jobs.appendItems(subject, turn.id, [
        say(`w${index}a`, `a${index}`),
        say(`w${index}b`, `b${index}`),
      ]),
    );
    const results = await Promise.all(writers);
    const positions = results.flat().map((row) => row.position);
    expect([...positions].sort((a, b) => a - b)).toEqual(Array.from({ length: 48 }, (_, i) => i));
    // Each writer's two items are adjacent: an append is one transaction.
    for (const rows of results) expect((rows[1]?.position ?? 0) - (rows[0]?.position ?? 0)).toBe(1);
    const stored = await jobs.readTrajectory(subject, job.id);
    expect(stored.rows.map((row) => row.position)).toEqual(Array.from({ length: 48 }, (_, i) => i));
  });

  it("B7 a repeated item key is idempotent for the same item and a 409 conflict for another", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    const [first] = await jobs.appendItems(subject, turn.id, [say("k", "same")]);
    const again = await Promise.all(
      [1, 2, 3].map(() => jobs.appendItems(subject, turn.id, [say("k", "same")])),
    );
    for (const rows of again) expect(rows).toEqual([first]);
    await expect(
      jobs.appendItems(subject, turn.id, [say("k2", "new"), say("k", "different")]),
    ).rejects.toMatchObject({
      code: "trajectory_item_key_conflict",
    });
    const { httpStatusOf } = await import("../../core/error-codes.js");
    expect(httpStatusOf("trajectory_item_key_conflict")).toBe(409);
    const stored = await jobs.readTrajectory(subject, job.id);
    expect(stored.rows.map((row) => row.item_key)).toEqual(["k"]);
  });

  it("B7 concurrent appends of one new key store it once", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => jobs.appendItems(subject, turn.id, [say("once", "x")])),
    );
    expect(new Set(results.map((rows) => JSON.stringify(rows))).size).toBe(1);
    expect((await jobs.readTrajectory(subject, job.id)).rows).toHaveLength(1);
  });

  it("B7 sanitizes items on append and records that they were redacted", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    const secret = "ghp_" + "Z9".repeat(20);
    const input: TurnItemInput = {
      item_key: "cmd",
      item: {
        type: "command_execution",
        call_id: "c1",
        command: ["curl", "-H", `Authorization: token ${secret}`],
        status: "completed",
        output: `ok ${secret}`,
        exit_code: 0,
        execution_mechanism: "local_dynamic",
      },
    };
    const [row] = await jobs.appendItems(subject, turn.id, [input]);
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row?.item.redacted).toBe(true);
    const raw = await getDatabase()
      .db.selectFrom("background_agent_job_turn_items")
      .select("item")
      .where("turn_id", "=", turn.id)
      .execute();
    expect(raw[0]?.item).not.toContain(secret);
    // Retrying the same append (secret included) is idempotent, not a conflict.
    expect(await jobs.appendItems(subject, turn.id, [input])).toEqual([row]);
    expect((await jobs.chatmlTrajectory(subject, job.id)).metadata.redacted).toBe(true);
  });

  it("B7 refuses an invalid item with a clear error and writes nothing", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    await expect(
      jobs.appendItems(subject, turn.id, [
        say("ok", "fine"),
        { item_key: "bad", item: { type: "tool_result", call_id: "c" } },
      ]),
    ).rejects.toMatchObject({
      code: "trajectory_row_invalid",
      where: expect.stringContaining("items[1].item"),
    });
    await expect(
      jobs.appendItems(subject, turn.id, [{ item_key: "", item: { type: "error", message: "m" } }]),
    ).rejects.toMatchObject({
      code: "gateway_input_invalid",
    });
    expect((await jobs.readTrajectory(subject, job.id)).rows).toEqual([]);
  });

  it("B8 steering raises the revision and appends; stored items are never rewritten", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id, [
      { item_key: "client:p1", item: { type: "user_message", text: "Summarise the changelog." } },
      say("m1", "Reading it."),
    ]);
    const before = await getDatabase()
      .db.selectFrom("background_agent_job_turn_items")
      .selectAll()
      .where("turn_id", "=", turn.id)
      .orderBy("position")
      .execute();
    const steered = await jobs.steerTurn(subject, turn.id, [
      { item_key: "client:p2", item: { type: "user_message", text: "Only the 2.x entries." } },
    ]);
    expect(steered.turn.revision).toBe(2);
    expect(steered.items.map((row) => [row.position, row.revision])).toEqual([[2, 2]]);
    await jobs.appendItems(subject, turn.id, [say("m2", "Done.")]);
    await jobs.finishTurn(subject, turn.id, "completed");
    // Prompting the finished turn again raises the revision once more.
    const prompted = await jobs.steerTurn(subject, turn.id, [
      { item_key: "client:p3", item: { type: "user_message", text: "And 3.x?" } },
    ]);
    expect(prompted.turn).toMatchObject({ revision: 3, status: "running" });
    // A repeated steer changes nothing.
    expect(
      (
        await jobs.steerTurn(subject, turn.id, [
          { item_key: "client:p3", item: { type: "user_message", text: "And 3.x?" } },
        ])
      ).turn.revision,
    ).toBe(3);
    const after = await getDatabase()
      .db.selectFrom("background_agent_job_turn_items")
      .selectAll()
      .where("turn_id", "=", turn.id)
      .orderBy("position")
      .execute();
    expect(after.slice(0, 2)).toEqual(before);
    expect(after.map((row) => [row.position, row.revision, row.item_key])).toEqual([
      [0, 1, "client:p1"],
      [1, 1, "m1"],
      [2, 2, "client:p2"],
      [3, 2, "m2"],
      [4, 3, "client:p3"],
    ]);
    await expect(jobs.steerTurn(subject, turn.id, [say("not-client", "x")])).rejects.toMatchObject({
      code: "gateway_input_invalid",
    });
  });

  it("B8 appending to a finished turn is refused (steer it instead)", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    await jobs.finishTurn(subject, turn.id, "completed");
    await expect(jobs.appendItems(subject, turn.id, [say("late", "x")])).rejects.toMatchObject({
      code: "job_state_conflict",
    });
  });

  it("B9 turns recorded before the item stream (no rows) show an empty trajectory", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn: first } = await jobs.startTurn(subject, job.id);
    await jobs.finishTurn(subject, first.id, "completed");
    const { turn: second } = await jobs.startTurn(subject, job.id, [say("a", "hello")]);
    const chatml = await jobs.chatmlTrajectory(subject, job.id);
    expect(chatml.turns).toEqual([
      { turn_id: first.id, message_count: 0 },
      { turn_id: second.id, message_count: 1 },
    ]);
    expect(chatml.messages).toEqual([{ role: "assistant", content: "hello" }]);
    const fresh = await setup(getDatabase());
    expect(await fresh.jobs.modelVisibleTrajectory(fresh.subject, fresh.job.id)).toEqual({
      messages: [],
      metadata: { redacted: false, content_truncated: false },
    });
  });

  it("B2 B12 the model-visible view of a stored job holds no stored id", async () => {
    const { subject, jobs, job } = await setup(getDatabase());
    const { turn } = await jobs.startTurn(subject, job.id);
    await jobs.appendItems(
      subject,
      turn.id,
      workedExampleRows
        .filter((row) => row.turn_id === workedExampleRows[0]?.turn_id)
        .map((row) => ({ item_key: row.item_key, item: row.item })),
    );
    const stored = await jobs.readTrajectory(subject, job.id);
    const bytes = modelVisibleJson(await jobs.modelVisibleTrajectory(subject, job.id));
    for (const id of [
      job.id,
      turn.id,
      job.conversationId,
      ...stored.rows.map((row) => row.item_key),
    ]) {
      expect(bytes).not.toContain(id);
    }
    expect(bytes).not.toMatch(/ID(call|msg|resp|rs|item)/);
    expect(bytes).toContain('"tool_call_id":"call_2"');
  });

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
    const events = await jobs.claimWakeEvents({
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
        jobs.claimWakeEvents({ consumer: `consumer-${index}`, conversationId: job.conversationId }),
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
      await jobs.claimWakeEvents({ consumer: "late", conversationId: job.conversationId }),
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
        jobs.claimWakeEvents({ consumer: `c${index}`, limit: 3, conversationId }),
      ),
    );
    const rest = await jobs.claimWakeEvents({ consumer: "sweeper", conversationId, limit: 1000 });
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
    await jobs.claimWakeEvents({ consumer: "c", conversationId: job.conversationId });
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
