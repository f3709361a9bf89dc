/**
 * Live updates by long polling (issue 20): with `wait_for_more_than` and `wait_ms`, the
 * messages route answers as soon as the conversation holds more messages, or once the time
 * has passed with the page as it is; the job route, with `wait_for_change` (the change mark of
 * the job it last gave), as soon as the job or its turns change; on both databases, over a real
 * socket.
 */
import { expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";

describeEachDialect("console long polling", (getDatabase) => {
  it("B14 a held request answers when a message arrives, and after wait_ms when none does", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "one" }] }],
    });
    const server = await testServer(getDatabase());
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const url = `http://127.0.0.1:${port}/ai-gateway/conversations/${first?.conversationId}/messages`;
    const headers = server.operator;
    try {
      // Nothing new: the reply comes after wait_ms, with the one message.
      let started = performance.now();
      const quiet = await fetch(`${url}?wait_for_more_than=1&wait_ms=600`, { headers });
      const quietBody = (await quiet.json()) as { messages: unknown[] };
      expect(performance.now() - started).toBeGreaterThanOrEqual(550);
      expect(quietBody.messages).toHaveLength(1);

      // A message written while the request is held: the reply comes with it, well before wait_ms.
      started = performance.now();
      const held = fetch(`${url}?wait_for_more_than=1&wait_ms=20000`, { headers });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await store.appendMessages(subject, {
        previousMessageId: first?.id ?? null,
        messages: [{ role: "assistant", content: [{ type: "text", text: "two" }] }],
      });
      const body = (await (await held).json()) as { messages: { content: { text: string }[] }[] };
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(body.messages.map((message) => message.content[0]?.text)).toEqual(["one", "two"]);

      // Already more than asked for: no wait at all.
      started = performance.now();
      await (await fetch(`${url}?wait_for_more_than=1&wait_ms=20000`, { headers })).json();
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await server.app.close();
    }
  });

  it("B14 a held request does not delay closing the server", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "one" }] }],
    });
    const server = await testServer(getDatabase());
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const held = fetch(
      `http://127.0.0.1:${port}/ai-gateway/conversations/${first?.conversationId}/messages?wait_for_more_than=1&wait_ms=20000`,
      { headers: server.operator },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    await server.app.close();
    expect(performance.now() - started).toBeLessThan(5_000);
    const reply = await held;
    expect(reply.status).toBe(200);
  });

  it("B14 a held job request answers when the job's turn gets a new item, and after wait_ms when nothing changes", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "one" }] }],
    });
    const jobs = new BackgroundAgentJobs(getDatabase());
    const job = await jobs.createJob(subject, {
      conversationId: first?.conversationId ?? "",
      retryBudget: 0,
    });
    await jobs.startAttempt(subject, job.id);
    const { turn } = await jobs.startTurn(subject, job.id, [
      { item_key: "client:1", item: { type: "user_message", text: "go" } },
    ]);
    const server = await testServer(getDatabase());
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const url = `http://127.0.0.1:${port}/background-agent-jobs/${job.id}`;
    const headers = server.operator;
    type Detail = { change_mark: string; turns: { trajectory: { items: unknown[] } }[] };
    try {
      const start = (await (await fetch(url, { headers })).json()) as Detail;
      expect(start.change_mark).toMatch(/^[\w-]{22}$/);

      // Nothing changes: the reply comes after wait_ms, with the same mark.
      let started = performance.now();
      const quiet = (await (
        await fetch(`${url}?wait_for_change=${start.change_mark}&wait_ms=600`, { headers })
      ).json()) as Detail;
      expect(performance.now() - started).toBeGreaterThanOrEqual(550);
      expect(quiet.change_mark).toBe(start.change_mark);

      // An item written while the request is held: the reply comes with it, well before wait_ms.
      started = performance.now();
      const held = fetch(`${url}?wait_for_change=${start.change_mark}&wait_ms=20000`, { headers });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await jobs.appendItems(subject, turn.id, [
        { item_key: "agent:1", item: { type: "agent_message", text: "working" } },
      ]);
      const body = (await (await held).json()) as Detail;
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(body.change_mark).not.toBe(start.change_mark);
      expect(body.turns[0]?.trajectory.items).toHaveLength(2);

      // A mark other than the current one: no wait at all.
      started = performance.now();
      await (
        await fetch(`${url}?wait_for_change=${start.change_mark}&wait_ms=20000`, { headers })
      ).json();
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await server.app.close();
    }
  });

  it("B14 wait_ms above 25 s is refused", async () => {
    const server = await testServer(getDatabase());
    const reply = await server.app.inject({
      method: "GET",
      url: "/ai-gateway/conversations/conv_x/messages?wait_for_more_than=0&wait_ms=25001",
      headers: server.operator,
    });
    await server.app.close();
    expect(reply.statusCode).toBe(400);
  });
});
