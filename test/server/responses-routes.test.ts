import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NO_UPSTREAM } from "../../packages/server/src/gateway/upstream/config.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("Responses API routes", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let alice: { authorization: string };
  let bob: { authorization: string };

  const upstreamConfig = () => ({
    ...upstreamConfigFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: upstream.url,
    }),
    timeoutMs: 300,
    maxRetries: 0,
  });

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    server = await testServer(getDatabase(), { upstream: upstreamConfig() });
    alice = await server.apiKeyFor(uniqueName("alice"));
    bob = await server.apiKeyFor(uniqueName("bob"));
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  const countRows = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
          getDatabase().db,
        )
      ).rows[0]?.n,
    );
  const post = (url: string, payload: unknown, headers = alice) =>
    server.app.inject({ method: "POST", url, headers, payload: payload as object });
  const get = (url: string, headers = alice) => server.app.inject({ method: "GET", url, headers });

  it("B2 B4 with the message cache off, a chain sends the upstream exactly the same requests", async () => {
    const uncached = await testServer(getDatabase(), {
      messageCacheBytes: 0,
      upstream: upstreamConfig(),
    });
    try {
      const carol = await uncached.apiKeyFor(uniqueName("carol"));
      upstream.reply = () => ({ text: "noted" });
      const sentBy = async (app: TestServer["app"], headers: { authorization: string }) => {
        const sent: unknown[] = [];
        let previous: string | undefined;
        for (const text of ["one", "two", "three"]) {
          const reply = await app.inject({
            method: "POST",
            url: "/v1/responses",
            headers,
            payload: { model: "claude-test", input: text, previous_response_id: previous },
          });
          expect(reply.statusCode).toBe(200);
          previous = (reply.json() as { id: string }).id;
          sent.push(upstream.requests[upstream.requests.length - 1]);
        }
        return sent;
      };
      const cached = await sentBy(server.app, alice);
      expect(await sentBy(uncached.app, carol)).toEqual(cached);
      expect(JSON.stringify(cached[2])).toContain("three");
    } finally {
      await uncached.app.close();
    }
  });

  it("nothing is written when a request fails validation (400 with where)", async () => {
    const before = await countRows();
    const cases: [unknown, string][] = [
      [{ model: "claude-test" }, "body.input"],
      [{ model: "claude-test", input: [{ role: "user", content: 5 }] }, "body.input[0].content"],
      [
        { model: "claude-test", input: [{ role: "tool", content: "be brief" }] },
        "body.input[0].role",
      ],
      [{ model: "claude-test", input: "hi", metadata: { items: ["a"] } }, "body.metadata.items"],
      [
        {
          model: "claude-test",
          input: [{ type: "function_call_output", call_id: "nope", output: "x" }],
        },
        "body.input[0].call_id",
      ],
      [{ model: "claude-test", input: "hi", previous_response_id: 7 }, "body.previous_response_id"],
    ];
    for (const [payload, where] of cases) {
      const reply = await post("/v1/responses", payload);
      expect(reply.statusCode, JSON.stringify(payload)).toBe(400);
      expect(reply.json().error.where).toBe(where);
    }
    expect(await countRows()).toBe(before);
  });

  it("B5 metadata with a list of items is refused; after a tool call the stored metadata holds no list and no raw body", async () => {
    upstream.reply = () => ({
      toolCalls: [{ id: "toolu_01B5", name: "lookup", input: { q: "x" } }],
    });
    const reply = await post("/v1/responses", {
      model: "claude-test",
      input: "look it up",
      metadata: { purpose: "b5" },
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
    });
    expect(reply.statusCode).toBe(200);
    const rows = await sql<{
      metadata: string;
    }>`select metadata from ai_gateway_messages where id = ${reply.json().id}`.execute(
      getDatabase().db,
    );
    const metadata = JSON.parse(rows.rows[0]?.metadata ?? "{}") as Record<
      string,
      Record<string, unknown>
    >;
    expect(metadata["caller"]).toEqual({ purpose: "b5" });
    for (const value of Object.values(metadata["gateway"] ?? {}))
      expect(Array.isArray(value)).toBe(false);
    expect(JSON.stringify(metadata)).not.toContain("toolu_01B5");
    expect(JSON.stringify(metadata)).not.toContain("content_block");
    upstream.reply = () => ({ text: "ok" });
  });

  it("another subject's response ids are 404, exactly like missing ones", async () => {
    const created = (
      await post("/v1/responses", { model: "claude-test", input: "private" })
    ).json();
    const before = await countRows();
    for (const [method, url, payload] of [
      ["GET", `/v1/responses/${created.id}`, undefined],
      ["GET", `/v1/responses/${created.id}/input_items`, undefined],
      [
        "POST",
        "/v1/responses",
        { model: "claude-test", input: "x", previous_response_id: created.id },
      ],
      ["POST", `/v1/responses/${created.id}/compress`, { summary: "s" }],
    ] as const) {
      const reply = method === "GET" ? await get(url, bob) : await post(url, payload, bob);
      const missing =
        method === "GET"
          ? await get(url.replace(created.id, "msg_doesnotexist"), bob)
          : await post(
              url.replace(created.id, "msg_doesnotexist"),
              JSON.parse(JSON.stringify(payload).replace(created.id, "msg_doesnotexist")),
              bob,
            );
      expect(reply.statusCode).toBe(404);
      expect(missing.statusCode).toBe(404);
      expect(reply.json().error.code).toBe(missing.json().error.code);
    }
    expect(await countRows()).toBe(before);
  });

  it("B6 compress returns the summary id, usable as previous_response_id; the context starts at the summary", async () => {
    upstream.reply = (body) => ({
      text: `echo ${JSON.stringify((body["messages"] as unknown[]).length)}`,
    });
    const first = (await post("/v1/responses", { model: "claude-test", input: "one" })).json();
    const second = (
      await post("/v1/responses", {
        model: "claude-test",
        input: "two",
        previous_response_id: first.id,
      })
    ).json();
    const compressed = await post(`/v1/responses/${second.id}/compress`, {
      summary: "We counted to two.",
    });
    expect(compressed.statusCode).toBe(200);
    expect(compressed.json()).toMatchObject({
      object: "response.compaction",
      previous_response_id: second.id,
      summary: "We counted to two.",
      replaced_message_count: 4,
    });
    const summaryId = compressed.json().id as string;
    const third = await post("/v1/responses", {
      model: "claude-test",
      input: "three",
      previous_response_id: summaryId,
    });
    expect(third.statusCode).toBe(200);
    const sent = upstream.requests[upstream.requests.length - 1] as {
      messages: { content: { text: string }[] }[];
    };
    // Anthropic takes one user turn: the summary and the new input are its two text blocks.
    expect(sent.messages.map((message) => message.content.map((part) => part.text))).toEqual([
      ["We counted to two.", "three"],
    ]);

    upstream.reply = () => ({ text: "Model summary: counted." });
    const byModel = await post(`/v1/responses/${second.id}/compress`, { model: "claude-test" });
    expect(byModel.statusCode).toBe(200);
    expect(byModel.json().summary).toBe("Model summary: counted.");
    const both = await post(`/v1/responses/${second.id}/compress`, {
      model: "claude-test",
      summary: "x",
    });
    expect(both.statusCode).toBe(400);
    upstream.reply = () => ({ text: "ok" });
  });

  it("an upstream 400 is answered 400, a 500 502, a slow one 504; a failure before any answer stores nothing (issue 17)", async () => {
    upstream.reply = () => ({ status: 400 });
    const refused = await post("/v1/responses", { model: "claude-test", input: "fail please" });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe("upstream_invalid_request");
    upstream.reply = () => ({ status: 500 });
    const failed = await post("/v1/responses", { model: "claude-test", input: "fail please" });
    expect(failed.statusCode).toBe(502);
    expect(failed.json().error.code).toBe("upstream_failed");
    const rows = await sql<{ n: number | string }>`
      select count(*) as n from ai_gateway_messages where cast(content as text) like ${"%fail please%"}`.execute(
      getDatabase().db,
    );
    expect(Number(rows.rows[0]?.n)).toBe(0);

    upstream.reply = () => ({ text: "late" });
    upstream.delayMs = 1500;
    const slow = await post("/v1/responses", { model: "claude-test", input: "be slow" });
    upstream.delayMs = 0;
    expect(slow.statusCode).toBe(504);
    expect(slow.json().error.code).toBe("upstream_timeout");
  });
});

describeEachDialect("Responses API without an upstream", (getDatabase) => {
  it("answers 503 upstream_not_configured saying how to configure one; nothing is written; the rest works", async () => {
    const server = await testServer(getDatabase(), { upstream: NO_UPSTREAM });
    const key = await server.apiKeyFor(uniqueName("subject"));
    const reply = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: key,
      payload: { model: "claude-sonnet-4-5", input: "hello" },
    });
    expect(reply.statusCode).toBe(503);
    expect(reply.json().error.code).toBe("upstream_not_configured");
    expect(reply.json().error.hint).toContain("ANTHROPIC_API_KEY");
    const unmapped = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: key,
      payload: { model: "my-local-model", input: "hello" },
    });
    expect(unmapped.json().error.hint).toContain("VERBATIM_MODEL_PROVIDERS");
    const count = await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
      getDatabase().db,
    );
    expect(Number(count.rows[0]?.n)).toBe(0);
    const health = await server.app.inject({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
    await server.app.close();
  });
});
