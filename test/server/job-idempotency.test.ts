/**
 * Issue 34 (exactly-once): job creation, starting an attempt and starting a turn take an
 * `idempotency_key`, so a client that retries after its connection died makes one job, one
 * attempt, one turn. Real server on loopback, on SQLite and PostgreSQL.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

interface Reply {
  readonly status: number;
  // The bodies are the routes' JSON; the tests read a few fields of them.
  readonly body: Record<string, unknown> & { error?: Record<string, unknown> };
}

describeEachDialect("idempotent job writes (issue 34)", (getDatabase) => {
  let server: TestServer;
  let base: string;
  const callers: Record<string, { authorization: string; subject: string; conversation: string }> =
    {};

  beforeAll(async () => {
    server = await testServer(getDatabase());
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    base = `http://127.0.0.1:${port}`;
    const store = new GatewayMessageStore(getDatabase());
    for (const name of ["alice", "bob"]) {
      const subject = uniqueName(name);
      const { authorization } = await server.apiKeyFor(subject);
      const [message] = await store.appendMessages(subject, {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "Run the nightly report." }] }],
      });
      callers[name] = { authorization, subject, conversation: message?.conversationId ?? "" };
    }
  });
  afterAll(async () => {
    await server.app.close();
  });

  const caller = (name: string) => {
    const found = callers[name];
    if (found === undefined) throw new Error(`no caller ${name}`);
    return found;
  };

  async function post(path: string, body: unknown, name = "alice"): Promise<Reply> {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        authorization: caller(name).authorization,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Reply["body"] };
  }

  const count = async (
    table: "background_agent_jobs" | "background_agent_job_turns",
    name: string,
  ) =>
    Number(
      (
        await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}
          where subject_uid = ${caller(name).subject}`.execute(getDatabase().db)
      ).rows[0]?.n,
    );

  const createBody = (key: string, name = "alice", retryBudget = 1) => ({
    conversation_id: caller(name).conversation,
    retry_budget: retryBudget,
    metadata: { purpose: "nightly" },
    idempotency_key: key,
  });

  it("issue 34: a retried creation returns the job the first made and creates none", async () => {
    const before = await count("background_agent_jobs", "alice");
    const first = await post("/v1/background-agent-jobs", createBody("create-retry-1"));
    expect(first.status).toBe(200);
    const again = await post("/v1/background-agent-jobs", createBody("create-retry-1"));
    expect(again).toEqual(first);
    expect(await count("background_agent_jobs", "alice")).toBe(before + 1);
    // Without a key a repeat is a new job (the key is what makes a retry safe).
    const { idempotency_key: _unused, ...plain } = createBody("unused");
    const a = await post("/v1/background-agent-jobs", plain);
    const b = await post("/v1/background-agent-jobs", plain);
    expect(a.body["id"]).not.toBe(b.body["id"]);
  });

  it("issue 34: the same key with another request is 409 gateway_idempotency_key_reused", async () => {
    const first = await post("/v1/background-agent-jobs", createBody("create-other-1"));
    expect(first.status).toBe(200);
    const before = await count("background_agent_jobs", "alice");
    const other = await post("/v1/background-agent-jobs", createBody("create-other-1", "alice", 2));
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: "gateway_idempotency_key_reused",
      where: "idempotencyKey",
    });
    expect(String(other.body.error?.["hint"])).toMatch(/new key/);
    // The key of a creation names no attempt either.
    const attempt = await post(`/v1/background-agent-jobs/${String(first.body["id"])}/attempts`, {
      idempotency_key: "create-other-1",
    });
    expect(attempt.status).toBe(409);
    expect(attempt.body.error?.["code"]).toBe("gateway_idempotency_key_reused");
    expect(await count("background_agent_jobs", "alice")).toBe(before);
  });

  it("issue 34: 20 concurrent creations with one key create exactly one job", async () => {
    const before = await count("background_agent_jobs", "alice");
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        post("/v1/background-agent-jobs", createBody("create-concurrent-1")),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    expect(new Set(replies.map((reply) => reply.body["id"])).size).toBe(1);
    expect(await count("background_agent_jobs", "alice")).toBe(before + 1);
  });

  it("issue 34: keys are per subject: another subject's same key makes its own job", async () => {
    const mine = await post("/v1/background-agent-jobs", createBody("shared-key-1"));
    const theirs = await post(
      "/v1/background-agent-jobs",
      createBody("shared-key-1", "bob"),
      "bob",
    );
    expect(theirs.status).toBe(200);
    expect(theirs.body["id"]).not.toBe(mine.body["id"]);
    expect(theirs.body["conversation_id"]).toBe(caller("bob").conversation);
  });

  it("issue 34: a bad key is 400 naming the field, and nothing is created", async () => {
    const before = await count("background_agent_jobs", "alice");
    for (const key of ["", "x".repeat(201), "has space", "clé", 7]) {
      const reply = await post("/v1/background-agent-jobs", {
        ...createBody("unused"),
        idempotency_key: key,
      });
      expect(reply.status, JSON.stringify(key)).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: "invalid_request",
        where: "body.idempotency_key",
      });
      expect(typeof reply.body.error?.["hint"]).toBe("string");
    }
    const attempt = await post("/v1/background-agent-jobs/job_missing/attempts", {
      idempotency_key: "",
    });
    expect(attempt.body.error).toMatchObject({ where: "body.idempotency_key" });
    expect(await count("background_agent_jobs", "alice")).toBe(before);
  });

  it("issue 34: a retried attempt start returns the running job; 20 at once start one attempt", async () => {
    const job = await post("/v1/background-agent-jobs", createBody("attempt-job-1"));
    const path = `/v1/background-agent-jobs/${String(job.body["id"])}/attempts`;
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => post(path, { idempotency_key: "attempt-1" })),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    expect(replies.map((reply) => reply.body["attempts"])).toEqual(Array(20).fill(1));
    const again = await post(path, { idempotency_key: "attempt-1" });
    expect(again.body).toMatchObject({ status: "running", attempts: 1 });
    // Without a key the retry is refused: the job is running already.
    expect((await post(path, undefined)).status).toBe(409);
  });

  it("issue 34: a retried turn start returns the first turn; 20 at once start one turn", async () => {
    const job = await post("/v1/background-agent-jobs", createBody("turn-job-1"));
    const jobPath = `/v1/background-agent-jobs/${String(job.body["id"])}`;
    // No body at all still starts an attempt.
    expect((await post(`${jobPath}/attempts`, undefined)).status).toBe(200);
    const turnsBefore = await count("background_agent_job_turns", "alice");
    const body = {
      items: [{ item_key: "client:prompt-1", item: { type: "user_message", text: "Go" } }],
      idempotency_key: "turn-1",
    };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => post(`${jobPath}/turns`, body)),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    const first = replies[0]?.body;
    for (const reply of replies) expect(reply.body).toEqual(first);
    expect(await count("background_agent_job_turns", "alice")).toBe(turnsBefore + 1);
    const other = await post(`${jobPath}/turns`, {
      ...body,
      items: [{ item_key: "client:prompt-1", item: { type: "user_message", text: "Stop" } }],
    });
    expect(other.status).toBe(409);
    expect(other.body.error?.["code"]).toBe("gateway_idempotency_key_reused");
    expect(await count("background_agent_job_turns", "alice")).toBe(turnsBefore + 1);
  });
});
