import { expect, it } from "vitest";
import { describeEachDialect } from "../../../../../test/support/databases.js";
import { workedExampleRows } from "../../../../../test/support/trajectory-fixtures.js";
import { modelVisibleJson } from "verbatim-llm/trajectory";
import type { TurnItemInput } from "./job-types.js";

import { say, setup } from "../../../../../test/support/background-jobs.js";

describeEachDialect("background agent jobs: items", (getDatabase) => {
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
    // The gateway's entry point registers the gateway's codes (and their statuses).
    await import("verbatim-llm-server/gateway");
    const { httpStatusOf } = await import("verbatim-llm/core");
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
      .where("subject_uid", "=", subject)
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
      .where("subject_uid", "=", subject)
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
      .where("subject_uid", "=", subject)
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
});
