/**
 * Issue 18: POST /v1/messages (and count_tokens) and POST /v1/chat/completions pass the
 * client's bytes to the upstream and the upstream's bytes back, with the official
 * `@anthropic-ai/sdk` and `openai` clients; each model call is recorded in a chain.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";
import { testServer, type TestServer } from "../support/server.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";

interface Seen {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  response: Buffer;
}

/** A fetch that keeps what the client sent and the bytes it received. */
function recordingFetch(seen: Seen[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const body = Buffer.from(await request.clone().arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    const response = await fetch(request);
    const entry: Seen = { url: request.url, headers, body, response: Buffer.alloc(0) };
    seen.push(entry);
    const bytes = Buffer.from(await response.arrayBuffer());
    entry.response = bytes;
    return new Response(bytes, { status: response.status, headers: response.headers });
  };
}

describeEachDialect("pass-through routes with the official clients", (getDatabase) => {
  let upstream: RawUpstream;
  let server: TestServer;
  let baseUrl: string;
  let key: string;
  let subject: string;

  let started: RawUpstreamServer;

  beforeAll(async () => {
    started = await startRawUpstreamServer(getDatabase());
    ({ upstream, server, baseUrl } = started);
    subject = uniqueName("subject");
    key = (await server.apiKeyFor(subject)).key;
  });
  afterAll(async () => {
    await started.close();
  });

  async function calls() {
    await callsPlaced(getDatabase(), subject);
    return recordedCallRows(getDatabase(), subject);
  }

  it("passes Anthropic Messages through byte for byte (JSON and streamed, ?beta=true, anthropic-beta) and records one chain", async () => {
    const seen: Seen[] = [];
    const client = new Anthropic({
      apiKey: key,
      baseURL: baseUrl,
      maxRetries: 0,
      fetch: recordingFetch(seen),
    });
    const first = await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "Hello", cache_control: { type: "ephemeral" } }],
        },
      ],
    });
    expect(first.content).toEqual([{ type: "text", text: "stub answer" }]);

    upstream.usage = { input: 3, output: 5, cacheRead: 120, cacheWrite: 0 };
    const stream = await client.beta.messages.create(
      {
        model: "claude-test",
        max_tokens: 100,
        stream: true,
        betas: ["interleaved-thinking-2025-05-14"],
        system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
        messages: [
          // The first message again, now as a plain string: the same message.
          { role: "user", content: "Hello" },
          { role: "assistant", content: [{ type: "text", text: "stub answer" }] },
          {
            role: "user",
            content: [{ type: "text", text: "And again", cache_control: { type: "ephemeral" } }],
          },
        ],
      },
      // Claude Code's path: ?beta=true on /v1/messages.
      { query: { beta: "true" } },
    );
    let text = "";
    for await (const event of stream) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        text += event.delta.text;
      }
    }
    expect(text).toBe("stub answer");

    const exchanges = upstream.exchanges.slice(-2);
    for (const [index, exchange] of exchanges.entries()) {
      const sent = seen[index] as Seen;
      // Request bytes and the path with its query, unchanged.
      expect(exchange.body.equals(sent.body)).toBe(true);
      expect(exchange.path).toBe(new URL(sent.url).pathname + new URL(sent.url).search);
      // Response bytes unchanged.
      expect(sent.response.equals(exchange.response)).toBe(true);
      // The gateway key is replaced by the provider key; other headers pass.
      expect(exchange.headers["x-api-key"]).toBe("sk-ant-upstream-key");
      expect(exchange.headers["anthropic-version"]).toBe(sent.headers["anthropic-version"]);
    }
    expect(exchanges[1]?.path).toBe("/v1/messages?beta=true");
    expect(exchanges[1]?.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");

    const rows = await calls();
    expect(rows).toHaveLength(2);
    expect(rows[1]?.conversation_id).toBe(rows[0]?.conversation_id);
    expect(rows[1]?.matched_count).toBe(1);
    expect(rows[1]?.previous_call_id).toBe(rows[0]?.id);
    expect(rows[1]?.path).toBe("/v1/messages?beta=true");
    expect(rows[1]).toMatchObject({ input_tokens: 3, output_tokens: 5, cache_read_tokens: 120 });
    expect(rows[0]?.requestText).toBe(seen[0]?.body.toString("utf8"));
    expect((rows[1]?.response ?? Buffer.alloc(0)).equals(exchanges[1]!.response)).toBe(true);
    // Credentials never reach the store.
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain("sk-ant-upstream-key");
  });

  it("passes count_tokens through and does not record it", async () => {
    const client = new Anthropic({ apiKey: key, baseURL: baseUrl, maxRetries: 0 });
    const before = (await calls()).length;
    const count = await client.messages.countTokens({
      model: "claude-test",
      messages: [{ role: "user", content: "Hello" }],
    });
    expect(count.input_tokens).toBe(42);
    expect(upstream.exchanges.at(-1)?.path).toBe("/v1/messages/count_tokens");
    expect((await calls()).length).toBe(before);
  });

  it("passes Chat Completions through (JSON and streamed) and records one chain", async () => {
    const seen: Seen[] = [];
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${baseUrl}/v1`,
      maxRetries: 0,
      fetch: recordingFetch(seen),
    });
    upstream.usage = { input: 7, output: 2, cacheRead: 0, cacheWrite: 0 };
    const first = await client.chat.completions.create({
      model: "gpt-test",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi chat" },
      ],
    });
    expect(first.choices[0]?.message.content).toBe("stub answer");
    upstream.usage = { input: 4, output: 2, cacheRead: 64, cacheWrite: 0 };
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Hi chat" }] },
        { role: "assistant", content: "stub answer" },
        { role: "user", content: "More" },
      ],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("stub answer");
    const exchanges = upstream.exchanges.slice(-2);
    for (const [index, exchange] of exchanges.entries()) {
      expect(exchange.path).toBe("/v1/chat/completions");
      expect(exchange.body.equals(seen[index]!.body)).toBe(true);
      expect(seen[index]!.response.equals(exchange.response)).toBe(true);
      expect(exchange.headers["authorization"]).toBe("Bearer sk-openai-upstream-key");
    }
    const rows = (await calls()).filter((row) => row.wire_format === "openai-chat");
    expect(rows).toHaveLength(2);
    expect(rows[1]?.conversation_id).toBe(rows[0]?.conversation_id);
    expect(rows[1]?.matched_count).toBe(2);
    expect(rows[1]).toMatchObject({ input_tokens: 4, output_tokens: 2, cache_read_tokens: 64 });
  });

  it("refuses a wrong gateway key sent as x-api-key before anything goes upstream", async () => {
    const before = upstream.exchanges.length;
    const response = await fetch(`${baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "vbk_not-a-key" },
      body: JSON.stringify({ model: "claude-test", max_tokens: 1, messages: [] }),
    });
    expect(response.status).toBe(401);
    expect(upstream.exchanges.length).toBe(before);
  });

  it("passes an upstream error status through as it came and records it", async () => {
    upstream.errorStatus = 529;
    try {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({
          model: "claude-test",
          max_tokens: 1,
          messages: [{ role: "user", content: "overload me" }],
        }),
      });
      expect(response.status).toBe(529);
      expect(
        Buffer.from(await response.arrayBuffer()).equals(upstream.exchanges.at(-1)!.response),
      ).toBe(true);
    } finally {
      upstream.errorStatus = undefined;
    }
    const last = (await calls()).at(-1);
    expect(last?.status_code).toBe(529);
  });

  it("refuses a body that is not JSON, or names no model, before anything goes upstream", async () => {
    const before = upstream.exchanges.length;
    const broken = await fetch(`${baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: '{"model": "claude-test", "messages": [',
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    const noModel = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ messages: [] }),
    });
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: { where: string } }).error.where).toBe("body.model");
    expect(upstream.exchanges.length).toBe(before);
  });

  it("answers 503 upstream_not_configured without a provider of the format, and 502 upstream_failed when the upstream is down", async () => {
    const closed = await startRawUpstream();
    await closed.close();
    const other = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-upstream-key",
        ANTHROPIC_BASE_URL: closed.url,
      }),
    });
    try {
      const otherKey = (await other.apiKeyFor(uniqueName("subject"))).key;
      const chat = await other.app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        headers: { "content-type": "application/json", authorization: `Bearer ${otherKey}` },
        payload: JSON.stringify({ model: "gpt-test", messages: [] }),
      });
      expect(chat.statusCode).toBe(503);
      expect(chat.json().error.code).toBe("upstream_not_configured");
      const down = await other.app.inject({
        method: "POST",
        url: "/v1/messages",
        headers: { "content-type": "application/json", "x-api-key": otherKey },
        payload: JSON.stringify({ model: "claude-test", max_tokens: 1, messages: [] }),
      });
      expect(down.statusCode).toBe(502);
      expect(down.json().error.code).toBe("upstream_failed");
    } finally {
      await other.app.close();
    }
  });

  it("sends each streamed event on as it comes, before the upstream has finished", async () => {
    let release: () => void = () => undefined;
    upstream.holdAfterFirstEvent = new Promise<void>((resolve) => (release = resolve));
    try {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({
          model: "claude-test",
          max_tokens: 1,
          stream: true,
          messages: [{ role: "user", content: "stream me" }],
        }),
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      // The upstream holds everything after message_start: it still arrives.
      const { value } = await reader.read();
      expect(Buffer.from(value ?? new Uint8Array()).toString("utf8")).toMatch(
        /^event: message_start\n/,
      );
      release();
      let rest = "";
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        rest += Buffer.from(next.value).toString("utf8");
      }
      expect(rest).toContain("event: message_stop");
    } finally {
      release();
      upstream.holdAfterFirstEvent = undefined;
    }
  });
});
