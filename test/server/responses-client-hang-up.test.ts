/**
 * Regression: "A client hang-up does not cancel the upstream call" (issue 15). Over a real
 * socket, a client that hangs up (streamed or not) has its upstream request aborted within 1 s;
 * the response ends incomplete with what arrived kept.
 */
import { request as httpRequest } from "node:http";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  startControlledUpstream,
  type ControlledUpstream,
} from "../support/controlled-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { until } from "../support/until.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("a client hang-up cancels the upstream call", (getDatabase) => {
  let upstream: ControlledUpstream;
  let server: TestServer;
  let url: string;
  let alice: { authorization: string };

  beforeAll(async () => {
    upstream = await startControlledUpstream();
    server = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        maxRetries: 0,
        timeoutMs: 60_000,
      },
    });
    url = await server.app.listen({ port: 0, host: "127.0.0.1" });
    alice = await server.apiKeyFor(uniqueName("alice"));
    // Streams some text, then keeps the request open (an answer that takes long).
    upstream.answer = (writer) => {
      writer.start("claude-test");
      writer.text("partial ");
      writer.text("answer");
    };
  });
  afterAll(async () => {
    await upstream.close();
    await server.app.close();
  });

  /** Sends a request and returns the request object, to destroy it, and what came back. */
  const send = (payload: Record<string, unknown>) => {
    let received = "";
    const request = httpRequest(`${url}/v1/responses`, {
      method: "POST",
      headers: { ...alice, "content-type": "application/json" },
    });
    request.on("response", (response) => {
      response.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
      response.on("error", () => undefined);
    });
    request.on("error", () => undefined);
    request.end(JSON.stringify({ model: "claude-test", input: "go", ...payload }));
    return { request, received: () => received };
  };

  const latestResponse = async () =>
    (
      await sql<{ id: string; status: string; content: string; metadata: string }>`
        select id, status, content, metadata from ai_gateway_messages
        where type = 'assistant' order by created_at desc, id desc limit 1`.execute(
        getDatabase().db,
      )
    ).rows[0];

  for (const stream of [false, true]) {
    it(`${stream ? "streamed" : "plain"}: the upstream request is aborted within 1 s, the response ends incomplete with the text that arrived`, async () => {
      const before = upstream.requests.length;
      const client = send({ stream });
      await until(() => upstream.requests.length > before);
      const upstreamRequest = upstream.requests[before];
      if (stream) await until(() => client.received().includes("answer"));
      else await until(async () => (await latestResponse())?.status === "in_progress");
      // Let the streamed text reach the server before hanging up.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const hungUpAt = performance.now();
      client.request.destroy();
      await until(() => upstreamRequest?.closedAt !== undefined, 3000);
      expect(upstreamRequest?.aborted).toBe(true);
      expect((upstreamRequest?.closedAt ?? Infinity) - hungUpAt).toBeLessThan(1000);
      await until(async () => (await latestResponse())?.status !== "in_progress");
      const row = await latestResponse();
      expect(row?.status).toBe("incomplete");
      expect(JSON.parse(row?.content ?? "[]")).toEqual([{ type: "text", text: "partial answer" }]);
      expect(JSON.parse(row?.metadata ?? "{}").gateway.stopReason).toBe("client_disconnected");
      const read = await server.app.inject({
        method: "GET",
        url: `/v1/responses/${row?.id}`,
        headers: alice,
      });
      expect(read.json().status).toBe("incomplete");
      expect(read.json().incomplete_details).toEqual({ reason: "client_disconnected" });
      expect(read.json().output[0].content[0].text).toBe("partial answer");
    });
  }
});
