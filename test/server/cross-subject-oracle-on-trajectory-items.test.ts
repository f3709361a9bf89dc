/**
 * Regression: "Cross-subject oracle on trajectory items" (issue 15). Subject B appending to
 * subject A's turn was told 409 `trajectory_item_key_conflict` for a key A's turn holds and 404
 * otherwise, so B learnt that A's turn and its keys exist. Ownership now comes before anything
 * that depends on stored data, on every route: this test sweeps every route that takes an id
 * with another subject's ids and requires the same status and body as for an id that does not
 * exist (the id itself aside), and that A's records are unchanged afterwards.
 */
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

/** Ids of the same shape as real ones that no record has. */
const missing = {
  response: "msg_0000000000000000000000missing",
  conversation: "conv_000000000000000000000missing",
  job: "job_0000000000000000000000missing",
  turn: "turn_000000000000000000000missing",
  anchor: "msg_0000000000000000000000missing",
  otherConversationAnchor: "msg_0000000000000000000000missing",
};

interface Probe {
  readonly name: string;
  /** The route as docs/openapi.json names it. */
  readonly route: string;
  readonly method: "GET" | "POST" | "DELETE";
  /** The request for an id (the other subject's, or a missing one). */
  readonly url: (id: string) => string;
  readonly body?: (id: string) => unknown;
  /** The console routes are the operator's; the others are subject B's. */
  readonly operator?: boolean;
  /** A's id of the kind the route takes, and a missing id of the same kind. */
  readonly kind: keyof typeof missing;
}

describeEachDialect("cross-subject oracle on trajectory items", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let alice: { authorization: string };
  let bob: { authorization: string };
  const ids = {
    response: "",
    conversation: "",
    job: "",
    turn: "",
    anchor: "",
    otherConversationAnchor: "",
  };
  let otherConversationOfOperatorView = "";

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    server = await testServer(getDatabase(), {
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        timeoutMs: 2000,
        maxRetries: 0,
      },
    });
    const aliceSubject = uniqueName("alice");
    const bobSubject = uniqueName("bob");
    alice = await server.apiKeyFor(aliceSubject);
    bob = await server.apiKeyFor(bobSubject);
    upstream.reply = () => ({ text: "Noted." });
    const created = await server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-sonnet-4-5", input: "Remember the launch code." },
    });
    expect(created.statusCode).toBe(200);
    ids.response = created.json().id;
    ids.conversation = created.json().conversation_id;
    ids.anchor = ids.response;
    // A conversation of B's, for the console's anchor check (an anchor of another subject).
    const [bobMessage] = await new GatewayMessageStore(getDatabase()).appendMessages(bobSubject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    });
    otherConversationOfOperatorView = bobMessage?.conversationId ?? "";
    // And another conversation of B's: its anchor is not one of the first conversation's.
    const [bobOtherMessage] = await new GatewayMessageStore(getDatabase()).appendMessages(
      bobSubject,
      {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "Elsewhere" }] }],
      },
    );
    ids.otherConversationAnchor = bobOtherMessage?.id ?? "";

    const post = (url: string, payload: unknown) =>
      server.app.inject({ method: "POST", url, headers: alice, payload: payload as object });
    const job = (
      await post("/v1/background-agent-jobs", {
        conversation_id: ids.conversation,
        retry_budget: 1,
      })
    ).json();
    ids.job = job.id;
    expect((await post(`/v1/background-agent-jobs/${ids.job}/attempts`, {})).statusCode).toBe(200);
    const turn = await post(`/v1/background-agent-jobs/${ids.job}/turns`, {
      items: [
        { item_key: "client:prompt", item: { type: "user_message", text: "Find the code" } },
        { item_key: "agent:1", item: { type: "agent_message", text: "Looking." } },
      ],
    });
    expect(turn.statusCode).toBe(200);
    ids.turn = turn.json().turn.id;
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  const probes: Probe[] = [
    {
      name: "read a response",
      route: "GET /v1/responses/{id}",
      kind: "response",
      method: "GET",
      url: (id) => `/v1/responses/${id}`,
    },
    {
      name: "a response's input items",
      route: "GET /v1/responses/{id}/input_items",
      kind: "response",
      method: "GET",
      url: (id) => `/v1/responses/${id}/input_items`,
    },
    {
      name: "cancel a response",
      route: "POST /v1/responses/{id}/cancel",
      kind: "response",
      method: "POST",
      url: (id) => `/v1/responses/${id}/cancel`,
    },
    {
      name: "continue a response",
      route: "POST /v1/responses",
      kind: "response",
      method: "POST",
      url: () => "/v1/responses",
      body: (id) => ({ model: "claude-sonnet-4-5", input: "And?", previous_response_id: id }),
    },
    {
      name: "compress with a summary",
      route: "POST /v1/responses/{id}/compress",
      kind: "response",
      method: "POST",
      url: (id) => `/v1/responses/${id}/compress`,
      body: () => ({ summary: "They talked." }),
    },
    {
      name: "compress with a model",
      route: "POST /v1/responses/{id}/compress",
      kind: "response",
      method: "POST",
      url: (id) => `/v1/responses/${id}/compress`,
      body: () => ({ model: "claude-sonnet-4-5" }),
    },
    {
      name: "create a job for a conversation",
      route: "POST /v1/background-agent-jobs",
      kind: "conversation",
      method: "POST",
      url: () => "/v1/background-agent-jobs",
      body: (id) => ({ conversation_id: id }),
    },
    {
      name: "claim a conversation's wake events",
      route: "POST /v1/background-agent-jobs/wake-events/claim",
      kind: "conversation",
      method: "POST",
      url: () => "/v1/background-agent-jobs/wake-events/claim",
      body: (id) => ({ conversation_id: id, consumer: "worker-1" }),
    },
    {
      name: "read a job",
      route: "GET /v1/background-agent-jobs/{id}",
      kind: "job",
      method: "GET",
      url: (id) => `/v1/background-agent-jobs/${id}`,
    },
    {
      name: "start an attempt",
      route: "POST /v1/background-agent-jobs/{id}/attempts",
      kind: "job",
      method: "POST",
      url: (id) => `/v1/background-agent-jobs/${id}/attempts`,
      body: () => ({}),
    },
    {
      name: "finish a job",
      route: "POST /v1/background-agent-jobs/{id}/finish",
      kind: "job",
      method: "POST",
      url: (id) => `/v1/background-agent-jobs/${id}/finish`,
      body: () => ({ status: "cancelled" }),
    },
    {
      name: "start a turn",
      route: "POST /v1/background-agent-jobs/{id}/turns",
      kind: "job",
      method: "POST",
      url: (id) => `/v1/background-agent-jobs/${id}/turns`,
      body: () => ({
        items: [{ item_key: "agent:1", item: { type: "agent_message", text: "x" } }],
      }),
    },
    {
      name: "append an item under a key the turn holds, with another item",
      route: "POST /v1/background-agent-job-turns/{id}/items",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/items`,
      body: () => ({
        items: [{ item_key: "agent:1", item: { type: "agent_message", text: "Other" } }],
      }),
    },
    {
      name: "append an item under a key the turn holds, with the same item",
      route: "POST /v1/background-agent-job-turns/{id}/items",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/items`,
      body: () => ({
        items: [{ item_key: "agent:1", item: { type: "agent_message", text: "Looking." } }],
      }),
    },
    {
      name: "append an item under a new key",
      route: "POST /v1/background-agent-job-turns/{id}/items",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/items`,
      body: () => ({
        items: [{ item_key: "agent:2", item: { type: "agent_message", text: "x" } }],
      }),
    },
    {
      name: "steer with a key the turn holds, with another item",
      route: "POST /v1/background-agent-job-turns/{id}/steer",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/steer`,
      body: () => ({
        items: [{ item_key: "client:prompt", item: { type: "user_message", text: "Other" } }],
      }),
    },
    {
      name: "steer with the same item",
      route: "POST /v1/background-agent-job-turns/{id}/steer",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/steer`,
      body: () => ({
        items: [
          { item_key: "client:prompt", item: { type: "user_message", text: "Find the code" } },
        ],
      }),
    },
    {
      name: "finish a turn",
      route: "POST /v1/background-agent-job-turns/{id}/finish",
      kind: "turn",
      method: "POST",
      url: (id) => `/v1/background-agent-job-turns/${id}/finish`,
      body: () => ({ status: "completed" }),
    },
    {
      name: "delete a response",
      route: "DELETE /v1/responses/{id}",
      kind: "response",
      method: "DELETE",
      url: (id) => `/v1/responses/${id}`,
    },
    {
      name: "replay a response's events",
      route: "GET /v1/responses/{id}",
      kind: "response",
      method: "GET",
      url: (id) => `/v1/responses/${id}?stream=true`,
    },
    {
      name: "count input tokens after a response",
      route: "POST /v1/responses/input_tokens",
      kind: "response",
      method: "POST",
      url: () => "/v1/responses/input_tokens",
      body: (id) => ({ model: "claude-sonnet-4-5", input: "And?", previous_response_id: id }),
    },
    {
      name: "read a conversation",
      route: "GET /v1/conversations/{id}",
      kind: "conversation",
      method: "GET",
      url: (id) => `/v1/conversations/${id}`,
    },
    {
      name: "update a conversation's metadata",
      route: "POST /v1/conversations/{id}",
      kind: "conversation",
      method: "POST",
      url: (id) => `/v1/conversations/${id}`,
      body: () => ({ metadata: { taken: "yes" } }),
    },
    {
      name: "list a conversation's items",
      route: "GET /v1/conversations/{id}/items",
      kind: "conversation",
      method: "GET",
      url: (id) => `/v1/conversations/${id}/items`,
    },
    {
      name: "add items to a conversation",
      route: "POST /v1/conversations/{id}/items",
      kind: "conversation",
      method: "POST",
      url: (id) => `/v1/conversations/${id}/items`,
      body: () => ({ items: [{ type: "message", role: "user", content: "Injected" }] }),
    },
    {
      name: "read a conversation's item",
      route: "GET /v1/conversations/{id}/items/{item_id}",
      kind: "conversation",
      method: "GET",
      url: (id) => `/v1/conversations/${id}/items/${ids.response}`,
    },
    {
      name: "delete a conversation's item",
      route: "DELETE /v1/conversations/{id}/items/{item_id}",
      kind: "conversation",
      method: "DELETE",
      url: (id) => `/v1/conversations/${id}/items/${ids.response}`,
    },
    {
      name: "delete a conversation",
      route: "DELETE /v1/conversations/{id}",
      kind: "conversation",
      method: "DELETE",
      url: (id) => `/v1/conversations/${id}`,
    },
    {
      name: "console: a conversation's messages from an anchor of another subject",
      route: "GET /ai-gateway/conversations/{id}/messages",
      kind: "anchor",
      operator: true,
      method: "GET",
      url: (id) =>
        `/ai-gateway/conversations/${otherConversationOfOperatorView}/messages?anchor=${id}`,
    },
    {
      name: "console: the model-visible view from an anchor of another subject",
      route: "GET /ai-gateway/conversations/{id}/messages",
      kind: "anchor",
      operator: true,
      method: "GET",
      url: (id) =>
        `/ai-gateway/conversations/${otherConversationOfOperatorView}/messages?view=model-visible&anchor=${id}`,
    },
    {
      name: "console: a conversation's messages from an anchor of another conversation",
      route: "GET /ai-gateway/conversations/{id}/messages",
      kind: "otherConversationAnchor",
      operator: true,
      method: "GET",
      url: (id) =>
        `/ai-gateway/conversations/${otherConversationOfOperatorView}/messages?view=chatml&anchor=${id}`,
    },
  ];

  const send = (probe: Probe, id: string): Promise<LightMyRequestResponse> =>
    server.app.inject({
      method: probe.method,
      url: probe.url(id),
      headers: probe.operator === true ? server.operator : bob,
      ...(probe.body === undefined ? {} : { payload: probe.body(id) as object }),
    });

  /** The reply with the id itself and the request id taken out. */
  const comparable = (reply: LightMyRequestResponse, id: string) => {
    const body = reply.json() as { error?: { request_id?: string } };
    delete body.error?.request_id;
    return {
      status: reply.statusCode,
      body: JSON.parse(JSON.stringify(body).split(id).join("<id>")),
    };
  };

  it("every route answers another subject's id exactly as an id that does not exist", async () => {
    const before = (
      await server.app.inject({
        method: "GET",
        url: `/v1/background-agent-jobs/${ids.job}`,
        headers: alice,
      })
    ).json();
    const upstreamCalls = upstream.requests.length;
    for (const probe of probes) {
      const foreign = comparable(await send(probe, ids[probe.kind]), ids[probe.kind]);
      const absent = comparable(await send(probe, missing[probe.kind]), missing[probe.kind]);
      expect({ probe: probe.name, ...foreign }).toEqual({ probe: probe.name, ...absent });
      expect({ probe: probe.name, status: foreign.status }).toEqual({
        probe: probe.name,
        status: 404,
      });
    }
    // Nothing of A's changed, and the model was never called for B.
    expect(upstream.requests.length).toBe(upstreamCalls);
    const after = (
      await server.app.inject({
        method: "GET",
        url: `/v1/background-agent-jobs/${ids.job}`,
        headers: alice,
      })
    ).json();
    expect(after).toEqual(before);
  });

  it("the sweep covers every caller route that takes an id (in its path or its body)", () => {
    const spec = server.app.swagger() as {
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    const swept = new Set(probes.map((probe) => probe.route));
    const takingIds: string[] = [];
    for (const [path, methods] of Object.entries(spec.paths)) {
      if (!path.startsWith("/v1/")) continue;
      for (const [method, operation] of Object.entries(methods)) {
        // Not ids of stored records: `call_id` names a model's tool call inside the request,
        // and `file_id` (of an image part) is refused, as there is no Files API here.
        const body = JSON.stringify(operation.requestBody ?? {})
          .replaceAll('"call_id"', "")
          .replaceAll('"file_id"', "");
        if (path.includes("{id}") || /"[a-z_]*_id"/.test(body)) {
          takingIds.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(takingIds.length).toBeGreaterThan(10);
    expect(takingIds.filter((route) => !swept.has(route))).toEqual([]);
  });

  it("the owner still gets the conflict for a key its turn holds (the check is not lost)", async () => {
    const conflict = await server.app.inject({
      method: "POST",
      url: `/v1/background-agent-job-turns/${ids.turn}/items`,
      headers: alice,
      payload: { items: [{ item_key: "agent:1", item: { type: "agent_message", text: "Other" } }] },
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe("trajectory_item_key_conflict");
  });
});
