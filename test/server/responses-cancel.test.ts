/**
 * POST /v1/responses/:id/cancel (issue 15, "Crash leftovers"), in OpenAI's shape: it returns the
 * response object. Cancelling one's own in-flight response aborts its upstream call and ends it
 * cancelled with what arrived; one answered by another server on the same database ends
 * cancelled too, and that server stops its upstream call at its next lease renewal; a finished
 * response comes back unchanged; another subject's id gets the same 404 as a missing id.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  startControlledUpstream,
  type ControlledUpstream,
} from "../support/controlled-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { until } from "../support/until.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("POST /v1/responses/:id/cancel", (getDatabase) => {
  let upstream: ControlledUpstream;
  let server: TestServer;
  let other: TestServer;
  let alice: { authorization: string };
  let bob: { authorization: string };

  beforeAll(async () => {
    upstream = await startControlledUpstream();
    const options = {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        maxRetries: 0,
        timeoutMs: 60_000,
        responseLeaseMs: 900,
      },
    };
    server = await testServer(getDatabase(), options);
    other = await testServer(getDatabase(), options);
    alice = await server.apiKeyFor(uniqueName("alice"));
    bob = await server.apiKeyFor(uniqueName("bob"));
  });
  afterAll(async () => {
    await upstream.close();
    await server.app.close();
    await other.app.close();
  });

  const hanging = () => {
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("so far");
    };
  };
  const startResponse = async (app: TestServer["app"], stream = false) => {
    const before = upstream.requests.length;
    const reply = app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "go", stream },
    });
    await until(() => upstream.requests.length > before);
    const upstreamRequest = upstream.requests[before];
    let id: string | undefined;
    await until(async () => {
      const rows = await getDatabase()
        .db.selectFrom("ai_gateway_messages")
        .select(["id"])
        .where("status", "=", "in_progress")
        .execute();
      id = rows[0]?.id;
      return id !== undefined;
    });
    // Let the streamed text reach the server.
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { reply, upstreamRequest, id: id ?? "" };
  };
  const cancel = (id: string, headers = alice, app = server.app) =>
    app.inject({ method: "POST", url: `/v1/responses/${id}/cancel`, headers });

  it("cancelling an in-flight response aborts its upstream call and ends it cancelled with what arrived", async () => {
    hanging();
    const { reply, upstreamRequest, id } = await startResponse(server.app);
    const cancelled = await cancel(id);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().object).toBe("response");
    expect(cancelled.json().id).toBe(id);
    expect(cancelled.json().status).toBe("cancelled");
    expect(cancelled.json().output[0].content[0].text).toBe("so far");
    await until(() => upstreamRequest?.closedAt !== undefined, 1000);
    expect(upstreamRequest?.aborted).toBe(true);
    const created = await reply;
    expect(created.statusCode).toBe(200);
    expect(created.json().status).toBe("cancelled");
    // A cancelled response can be continued.
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("again");
      writer.end();
    };
    const next = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "more", previous_response_id: id },
    });
    expect(next.statusCode, next.body).toBe(200);
    // Cancelling a finished response gives it back unchanged.
    const again = await cancel(next.json().id);
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe("completed");
  });

  it("a streamed response cancelled ends its stream with the cancelled response", async () => {
    hanging();
    const { reply, id } = await startResponse(server.app, true);
    expect((await cancel(id)).json().status).toBe("cancelled");
    const created = await reply;
    expect(created.body).toContain('"status":"cancelled"');
    expect(created.body).not.toContain("response.failed");
  });

  it("a response answered by another server ends cancelled; that server stops its upstream call", async () => {
    hanging();
    const { reply, upstreamRequest, id } = await startResponse(other.app);
    const cancelled = await cancel(id);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().status).toBe("cancelled");
    // The other server learns it at its next renewal (a third of its 900 ms lease).
    await until(() => upstreamRequest?.closedAt !== undefined, 2000);
    expect(upstreamRequest?.aborted).toBe(true);
    const created = await reply;
    expect(created.json().status).toBe("cancelled");
  });

  it("another subject's id gets the same 404 as a missing id", async () => {
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("done");
      writer.end();
    };
    const created = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "mine" },
    });
    const id = created.json().id as string;
    const missing = "msg_0000000000000000000000000";
    const theirs = await cancel(id, bob);
    const none = await cancel(missing, bob);
    expect(theirs.statusCode).toBe(404);
    expect(none.statusCode).toBe(404);
    const shape = (body: { error: Record<string, string> }, ownId: string) => {
      const { request_id: _request, ...rest } = body.error;
      return JSON.parse(JSON.stringify(rest).replaceAll(ownId, "<id>")) as unknown;
    };
    expect(shape(theirs.json(), id)).toEqual(shape(none.json(), missing));
  });
});
