/**
 * The pass-through routes over HTTP: every refusal a client can meet gets the same status,
 * headers and error body over a socket as injected, a chunked body over the limit is refused
 * while it is read, rate limits answer 429 with retry-after, a served call is recorded, logged
 * and waited for on close, and behind trusted proxies a call is served as well.
 * Real parts: the server listening on loopback, a local upstream speaking the providers' wire
 * formats (raw-upstream.ts; a provider's API cannot be reached from here), SQLite and PostgreSQL.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ServerOptions } from "../../packages/server/src/server/app.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";
import { testServer, type TestServer } from "../support/server.js";

const BODY_LIMIT = 4096;

interface Started {
  readonly server: TestServer;
  readonly baseUrl: string;
  close(): Promise<void>;
}

async function start(
  getDatabase: Parameters<typeof testServer>[0],
  upstreamUrl: string,
  options: Partial<Omit<ServerOptions, "database">> = {},
): Promise<Started> {
  const server = await testServer(getDatabase, {
    // Anthropic only: a chat completion finds no upstream of its format.
    upstream: upstreamConfigFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-upstream-key",
      ANTHROPIC_BASE_URL: upstreamUrl,
    }),
    bodyLimitBytes: BODY_LIMIT,
    ...options,
  });
  await server.app.listen({ host: "127.0.0.1", port: 0 });
  const address = server.app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => server.app.close(),
  };
}

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly requestIdHeader: string | undefined;
  readonly retryAfter: string | undefined;
  readonly body: Record<string, unknown>;
}

interface Case {
  readonly name: string;
  readonly method?: "POST" | "GET";
  readonly path?: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  readonly status: number;
  readonly code?: string;
}

/** The error body without its request id, which differs between two requests. */
function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const error = body["error"] as Record<string, unknown> | undefined;
  if (error === undefined) return body;
  const { request_id: _ignored, ...rest } = error;
  return { error: rest };
}

async function overHttp(baseUrl: string, test: Case): Promise<Answer> {
  const response = await fetch(`${baseUrl}${test.path ?? "/v1/messages"}`, {
    method: test.method ?? "POST",
    headers: test.headers,
    ...(test.body === undefined
      ? {}
      : { body: typeof test.body === "string" ? test.body : new Uint8Array(test.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? undefined,
    requestIdHeader: response.headers.get("x-request-id") ?? undefined,
    retryAfter: response.headers.get("retry-after") ?? undefined,
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

async function injected(server: TestServer, test: Case): Promise<Answer> {
  const response = await server.app.inject({
    method: test.method ?? "POST",
    url: test.path ?? "/v1/messages",
    headers: test.headers,
    ...(test.body === undefined ? {} : { payload: test.body }),
  });
  const header = (name: string) => {
    const value = response.headers[name];
    return value === undefined ? undefined : String(value);
  };
  return {
    status: response.statusCode,
    contentType: header("content-type"),
    requestIdHeader: header("x-request-id"),
    retryAfter: header("retry-after"),
    body: response.json<Record<string, unknown>>(),
  };
}

describeEachDialect("the pass-through routes over HTTP", (getDatabase) => {
  let upstream: RawUpstream;
  let down: RawUpstream;
  let started: Started;
  let downServer: Started;
  let key: string;
  let downKey: string;
  let subject: string;

  beforeAll(async () => {
    upstream = await startRawUpstream();
    down = await startRawUpstream();
    await down.close();
    started = await start(getDatabase(), upstream.url);
    downServer = await start(getDatabase(), down.url);
    subject = uniqueName("subject");
    key = (await started.server.apiKeyFor(subject)).key;
    downKey = (await downServer.server.apiKeyFor(uniqueName("subject"))).key;
  });
  afterAll(async () => {
    await started.close();
    await downServer.close();
    await upstream.close();
  });

  const json = (extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    "x-api-key": "",
    ...extra,
  });
  const message = JSON.stringify({
    model: "claude-test",
    max_tokens: 1,
    messages: [{ role: "user", content: "hi" }],
  });

  function cases(): Case[] {
    const valid = json({ "x-api-key": key });
    return [
      {
        name: "a body that is not JSON",
        headers: valid,
        body: '{"model": "claude-test", "messages": [',
        status: 400,
        code: "invalid_json",
      },
      {
        name: "a body that is not UTF-8",
        headers: valid,
        body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
        status: 400,
        code: "invalid_utf8",
      },
      {
        name: "a body that names no model",
        headers: valid,
        body: JSON.stringify({ messages: [] }),
        status: 400,
        code: "invalid_request",
      },
      {
        // Issue 31: a call that could not be recorded is refused before it goes upstream.
        name: "issue 31: a NUL in the model",
        headers: valid,
        body: '{"model":"claude-test\\u0000","max_tokens":1,"messages":[]}',
        status: 400,
        code: "invalid_request",
      },
      {
        name: "issue 31: a lone surrogate in the model",
        headers: valid,
        body: '{"model":"claude-\\udc00","max_tokens":1,"messages":[]}',
        status: 400,
        code: "invalid_request",
      },
      {
        name: "a chat completion with no upstream of its format",
        path: "/v1/chat/completions",
        headers: json({ authorization: `Bearer ${key}`, "x-api-key": "" }),
        body: JSON.stringify({ model: "gpt-test", messages: [] }),
        status: 503,
        code: "upstream_not_configured",
      },
      {
        name: "an unknown key",
        headers: json({ "x-api-key": "vbk_not-a-key" }),
        body: message,
        status: 401,
        code: "unauthorized",
      },
      {
        name: "no key",
        headers: { "content-type": "application/json" },
        body: message,
        status: 401,
        code: "unauthorized",
      },
      {
        name: "a gzip-encoded body",
        headers: { ...valid, "content-encoding": "gzip" },
        body: message,
        status: 415,
        code: "unsupported_media_type",
      },
      {
        name: "a body that is not declared as JSON",
        headers: { ...valid, "content-type": "text/plain" },
        body: message,
        status: 415,
        code: "unsupported_media_type",
      },
      {
        name: "a body declared in another charset",
        headers: { ...valid, "content-type": "application/json; charset=latin1" },
        body: message,
        status: 415,
        code: "unsupported_media_type",
      },
      {
        name: "a body over the limit",
        headers: valid,
        body: JSON.stringify({ model: "claude-test", pad: "x".repeat(BODY_LIMIT) }),
        status: 413,
        code: "payload_too_large",
      },
      {
        name: "no body",
        headers: valid,
        body: "",
        status: 400,
      },
      {
        name: "another method",
        method: "GET",
        headers: valid,
        status: 405,
        code: "method_not_allowed",
      },
    ];
  }

  it("answers every refusal over HTTP as it answers an injected request", async () => {
    for (const test of cases()) {
      const exchangesBefore = upstream.exchanges.length;
      const http = await overHttp(started.baseUrl, test);
      const router = await injected(started.server, test);
      expect(http.status, test.name).toBe(test.status);
      if (test.code !== undefined) {
        expect((http.body["error"] as { code: string }).code, test.name).toBe(test.code);
      }
      expect(withoutRequestId(http.body), test.name).toEqual(withoutRequestId(router.body));
      expect(http.contentType, test.name).toBe(router.contentType);
      expect(http.requestIdHeader, test.name).toBe(
        (http.body["error"] as { request_id: string }).request_id,
      );
      expect(upstream.exchanges.length, `${test.name}: nothing upstream`).toBe(exchangesBefore);
    }
  });

  it("answers an unreachable upstream with 502 upstream_failed, over HTTP as injected", async () => {
    const test: Case = {
      name: "upstream down",
      headers: json({ "x-api-key": downKey }),
      body: message,
      status: 502,
    };
    const http = await overHttp(downServer.baseUrl, test);
    const router = await injected(downServer.server, test);
    expect(http.status).toBe(502);
    expect(withoutRequestId(http.body)).toEqual(withoutRequestId(router.body));
    expect((http.body["error"] as { code: string }).code).toBe("upstream_failed");
  });

  it("refuses a chunked body over the limit with 413 payload_too_large while reading it", async () => {
    const exchangesBefore = upstream.exchanges.length;
    const big = JSON.stringify({ model: "claude-test", pad: "y".repeat(BODY_LIMIT * 4) });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(big);
        for (let at = 0; at < bytes.length; at += 1000)
          controller.enqueue(bytes.slice(at, at + 1000));
        controller.close();
      },
    });
    const response = await fetch(`${started.baseUrl}/v1/messages`, {
      method: "POST",
      headers: json({ "x-api-key": key }),
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("payload_too_large");
    expect(body.error.message).toBe("the request body is larger than the limit");
    expect(upstream.exchanges.length).toBe(exchangesBefore);
  });

  it("serves a call: the same bytes both ways, the client's request id, one recorded call", async () => {
    const response = await fetch(`${started.baseUrl}/v1/messages?beta=true`, {
      method: "POST",
      headers: json({ "x-api-key": key, "x-request-id": "over-http-1", "anthropic-beta": "b1" }),
      body: message,
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("over-http-1");
    const exchange = upstream.exchanges.at(-1);
    expect(exchange?.path).toBe("/v1/messages?beta=true");
    expect(exchange?.body.equals(Buffer.from(message))).toBe(true);
    expect(exchange?.headers["anthropic-beta"]).toBe("b1");
    expect(exchange?.headers["x-api-key"]).toBe("sk-ant-upstream-key");
    expect(bytes.equals(exchange?.response ?? Buffer.alloc(0))).toBe(true);
    await callsPlaced(getDatabase(), subject);
    const rows = await recordedCallRows(getDatabase(), subject);
    expect(rows.at(-1)?.requestText).toBe(message);
    expect(rows.at(-1)?.request_headers).not.toContain(key);
  });

  it("answers a key over its rate limit with 429 and retry-after", async () => {
    const limited = await start(getDatabase(), upstream.url, {
      rateLimit: { perMinute: 1, burst: 1 },
    });
    try {
      const limitedKey = (await limited.server.apiKeyFor(uniqueName("subject"))).key;
      const test: Case = {
        name: "rate",
        headers: json({ "x-api-key": limitedKey }),
        body: message,
        status: 200,
      };
      const first = await fetch(`${limited.baseUrl}/v1/messages`, {
        method: "POST",
        headers: test.headers,
        body: message,
      });
      await first.arrayBuffer();
      expect(first.status).toBe(200);
      const second = await overHttp(limited.baseUrl, test);
      expect(second.status).toBe(429);
      expect((second.body["error"] as { code: string }).code).toBe("rate_limited");
      expect(Number(second.retryAfter)).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it("answers an address over the failed-authentication limit with 429, even with a valid key", async () => {
    const guarded = await start(getDatabase(), upstream.url, {
      failedAuthenticationLimit: { perMinute: 1, burst: 1 },
    });
    try {
      const validKey = (await guarded.server.apiKeyFor(uniqueName("subject"))).key;
      const wrong = await fetch(`${guarded.baseUrl}/v1/messages`, {
        method: "POST",
        headers: json({ "x-api-key": "vbk_not-a-key" }),
        body: message,
      });
      expect(wrong.status).toBe(401);
      const blocked = await overHttp(guarded.baseUrl, {
        name: "blocked",
        headers: json({ "x-api-key": validKey }),
        body: message,
        status: 429,
      });
      expect(blocked.status).toBe(429);
      expect((blocked.body["error"] as { code: string }).code).toBe("authentication_rate_limited");
    } finally {
      await guarded.close();
    }
  });

  it("serves a call behind trusted proxies (the client's address comes from forwarded headers)", async () => {
    const proxied = await start(getDatabase(), upstream.url, { trustedProxies: ["127.0.0.1"] });
    try {
      const proxiedKey = (await proxied.server.apiKeyFor(uniqueName("subject"))).key;
      const response = await fetch(`${proxied.baseUrl}/v1/messages`, {
        method: "POST",
        headers: json({ "x-api-key": proxiedKey }),
        body: message,
      });
      await response.arrayBuffer();
      expect(response.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it("logs a served call's request and completion with its request id, and close waits for a call in flight", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split("\n")) {
            if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
          }
          done();
        },
      }),
    );
    const logged = await start(getDatabase(), upstream.url, { logger });
    const loggedSubject = uniqueName("subject");
    const loggedKey = (await logged.server.apiKeyFor(loggedSubject)).key;
    let release: () => void = () => undefined;
    upstream.holdAfterFirstEvent = new Promise<void>((resolve) => (release = resolve));
    let closed = false;
    try {
      const response = await fetch(`${logged.baseUrl}/v1/messages`, {
        method: "POST",
        headers: json({ "x-api-key": loggedKey, "x-request-id": "over-http-logged" }),
        body: JSON.stringify({
          model: "claude-test",
          max_tokens: 1,
          stream: true,
          messages: [{ role: "user", content: "hold me" }],
        }),
      });
      const reader = response.body!.getReader();
      await reader.read();
      // The first event is here: close the server while the call is in flight.
      const closing = logged.close().then(() => (closed = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(closed).toBe(false);
      release();
      for (;;) if ((await reader.read()).done) break;
      await closing;
      expect(response.status).toBe(200);
    } finally {
      upstream.holdAfterFirstEvent = undefined;
      release();
      if (!closed) await logged.close();
    }
    // Placed before close resolved: close waits for the call's placing too.
    const rows = await recordedCallRows(getDatabase(), loggedSubject);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.conversation_id).not.toBe("");
    const mine = lines.filter((line) => line["request_id"] === "over-http-logged");
    expect(mine.map((line) => line["msg"])).toEqual(["incoming request", "request completed"]);
    expect(mine[1]).toMatchObject({ res: { statusCode: 200 } });
    expect(typeof mine[1]?.["responseTime"]).toBe("number");
  });
});
