import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("job routes and the job console", (getDatabase) => {
  let server: TestServer;
  let alice: { authorization: string };
  let bob: { authorization: string };
  let conversationId: string;

  beforeAll(async () => {
    server = await testServer(getDatabase());
    const subject = uniqueName("alice");
    alice = await server.apiKeyFor(subject);
    bob = await server.apiKeyFor(uniqueName("bob"));
    const [message] = await new GatewayMessageStore(getDatabase()).appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "Please run the report job." }] }],
    });
    conversationId = message?.conversationId ?? "";
  });
  afterAll(async () => {
    await server.app.close();
  });

  const post = (url: string, payload: unknown, headers = alice) =>
    server.app.inject({ method: "POST", url, headers, payload: payload as object });
  const console = (url: string) =>
    server.app.inject({ method: "GET", url, headers: server.operator });
  const messageCount = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
          getDatabase().db,
        )
      ).rows[0]?.n,
    );

  it("B7 B8 B9 B10 B11 B12 B14 a job's life over HTTP, shown by the console in three views", async () => {
    const messagesBefore = await messageCount();
    const job = (
      await post("/v1/background-agent-jobs", { conversation_id: conversationId, retry_budget: 1 })
    ).json();
    expect(job).toMatchObject({
      status: "queued",
      attempts: 0,
      retry_budget: 1,
      conversation_id: conversationId,
    });
    expect((await post(`/v1/background-agent-jobs/${job.id}/attempts`, {})).json().status).toBe(
      "running",
    );

    const empty = (await post(`/v1/background-agent-jobs/${job.id}/turns`, { items: [] })).json();
    await post(`/v1/background-agent-job-turns/${empty.turn.id}/finish`, { status: "completed" });

    const started = await post(`/v1/background-agent-jobs/${job.id}/turns`, {
      items: [
        { item_key: "client:prompt-1", item: { type: "user_message", text: "Build the report" } },
        {
          item_key: "agent:1",
          item: { type: "agent_message", text: "Searching.", provider_response_id: "resp_Secret1" },
        },
        {
          item_key: "call:1",
          item: {
            type: "tool_call",
            call_id: "call_Internal9",
            name: "search",
            arguments: "{}",
            execution_mechanism: "provider_hosted",
          },
        },
        {
          item_key: "result:1",
          item: {
            type: "tool_result",
            call_id: "call_Internal9",
            name: "search",
            output: "found",
            is_error: false,
            execution_mechanism: "provider_hosted",
          },
        },
      ],
    });
    expect(started.statusCode).toBe(200);
    const turn = started.json().turn;
    expect(started.json().items.map((row: { position: number }) => row.position)).toEqual([
      0, 1, 2, 3,
    ]);

    // Idempotent by key; a different item under a stored key is a 409 and writes nothing.
    const again = await post(`/v1/background-agent-job-turns/${turn.id}/items`, {
      items: [
        {
          item_key: "agent:1",
          item: { type: "agent_message", text: "Searching.", provider_response_id: "resp_Secret1" },
        },
      ],
    });
    expect(again.json().items[0].position).toBe(1);
    const conflict = await post(`/v1/background-agent-job-turns/${turn.id}/items`, {
      items: [{ item_key: "agent:1", item: { type: "agent_message", text: "Something else" } }],
    });
    expect(conflict.statusCode).toBe(409);

    const steered = (
      await post(`/v1/background-agent-job-turns/${turn.id}/steer`, {
        items: [
          {
            item_key: "client:steer-1",
            item: {
              type: "user_message",
              text: "Make it short, token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            },
          },
        ],
      })
    ).json();
    expect(steered.turn.revision).toBe(2);
    expect(steered.items[0]).toMatchObject({ position: 4, revision: 2 });
    expect(JSON.stringify(steered.items[0].item)).not.toContain("sk-ant-api03");
    await post(`/v1/background-agent-job-turns/${turn.id}/finish`, { status: "completed" });

    const finished = await post(`/v1/background-agent-jobs/${job.id}/finish`, {
      status: "succeeded",
      result: { pages: 3 },
    });
    expect(finished.json()).toMatchObject({
      status: "succeeded",
      result: expect.objectContaining({ status: "succeeded" }),
    });

    const claimed = (
      await post("/v1/background-agent-jobs/wake-events/claim", {
        conversation_id: conversationId,
        consumer: "worker-a",
      })
    ).json();
    expect(claimed.data).toHaveLength(1);
    expect(claimed.data[0].payload).toMatchObject({
      job_id: job.id,
      status: "succeeded",
      result: { pages: 3 },
    });
    expect(JSON.stringify(claimed.data[0].payload)).not.toContain("Build the report");
    const twice = (
      await post("/v1/background-agent-jobs/wake-events/claim", {
        conversation_id: conversationId,
        consumer: "worker-b",
      })
    ).json();
    expect(twice.data).toEqual([]);
    expect(await messageCount()).toBe(messagesBefore);

    // The console: stored rows, ChatML and model-visible per turn; the empty turn is empty (B9).
    const stored = (await console(`/background-agent-jobs/${job.id}`)).json();
    expect(stored.turns.map((one: { turn_index: number }) => one.turn_index)).toEqual([0, 1]);
    expect(stored.turns[0].trajectory).toEqual({
      view: "stored",
      items: [],
      metadata: { redacted: false, content_truncated: false },
    });
    expect(
      stored.turns[1].trajectory.items.map((row: { item_key: string }) => row.item_key),
    ).toEqual(["client:prompt-1", "agent:1", "call:1", "result:1", "client:steer-1"]);
    expect(stored.turns[1].trajectory.metadata.redacted).toBe(true);

    const chatml = (await console(`/background-agent-jobs/${job.id}?view=chatml`)).json();
    expect(chatml.turns[0].trajectory.messages).toEqual([]);
    const tool = chatml.turns[1].trajectory.messages.find(
      (message: { role: string }) => message.role === "tool",
    );
    expect(tool).toMatchObject({
      tool_call_id: "call_Internal9",
      metadata: { execution_mechanism: "provider_hosted" },
    });

    const visible = (await console(`/background-agent-jobs/${job.id}?view=model-visible`)).json();
    const text = JSON.stringify(
      visible.turns.map((one: { trajectory: unknown }) => one.trajectory),
    );
    for (const id of [job.id, turn.id, "call_Internal9", "resp_Secret1", "client:prompt-1"])
      expect(text).not.toContain(id);
    expect(text).toContain('"call_1"');
    expect(visible.turns[1].trajectory.metadata).toEqual({
      redacted: true,
      content_truncated: false,
    });

    const list = (await console(`/background-agent-jobs?conversation_id=${conversationId}`)).json();
    expect(list.data.map((one: { id: string }) => one.id)).toEqual([job.id]);
  });

  it("another subject's jobs, turns and conversations are 404; retry budget and state conflicts are 409", async () => {
    const job = (
      await post("/v1/background-agent-jobs", { conversation_id: conversationId, retry_budget: 0 })
    ).json();
    await post(`/v1/background-agent-jobs/${job.id}/attempts`, {});
    const turn = (await post(`/v1/background-agent-jobs/${job.id}/turns`, { items: [] })).json()
      .turn;
    const asBob = [
      await server.app.inject({
        method: "GET",
        url: `/v1/background-agent-jobs/${job.id}`,
        headers: bob,
      }),
      await post(`/v1/background-agent-jobs/${job.id}/attempts`, {}, bob),
      await post(`/v1/background-agent-job-turns/${turn.id}/items`, { items: [] }, bob),
      await post("/v1/background-agent-jobs", { conversation_id: conversationId }, bob),
      await post(
        "/v1/background-agent-jobs/wake-events/claim",
        { conversation_id: conversationId, consumer: "x" },
        bob,
      ),
    ];
    expect(asBob.map((reply) => reply.statusCode)).toEqual([404, 404, 404, 404, 404]);
    const failed = (
      await post(`/v1/background-agent-jobs/${job.id}/finish`, { status: "failed", error: "boom" })
    ).json();
    expect(failed.status).toBe("failed");
    const retry = await post(`/v1/background-agent-jobs/${job.id}/attempts`, {});
    expect(retry.statusCode).toBe(409);
    expect((await console("/background-agent-jobs/job_missing")).statusCode).toBe(404);
    const bad = await post("/v1/background-agent-jobs", {
      conversation_id: conversationId,
      retry_budget: -1,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.where).toBe("body.retry_budget");
  });
});
