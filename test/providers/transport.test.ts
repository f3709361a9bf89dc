/**
 * The transport against real HTTP servers on 127.0.0.1: the local Anthropic-format server of
 * test/support/provider-servers/ (laid out after captured Anthropic streams), and small
 * servers that answer with errors, stall or drop the connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isVerbatimError } from "../../packages/library/src/core/errors.js";
import { startLocalProvider } from "../support/provider-servers/index.js";
import { resolveEndpoint, requestUrl } from "../../packages/library/src/providers/endpoints.js";
import {
  retryAfterMs,
  sendRound,
  streamRound,
} from "../../packages/library/src/providers/transport.js";
import type { OutgoingRequest, RetryNotice } from "../../packages/library/src/providers/types.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function server(
  handler: (request: IncomingMessage, response: ServerResponse, count: number) => void,
) {
  let count = 0;
  let connections = 0;
  const http = createServer((request, response) => {
    count++;
    request.resume();
    request.on("end", () => handler(request, response, count));
  });
  http.on("connection", () => connections++);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    count: () => count,
    connections: () => connections,
  };
}

const request = (
  body = '{"model":"m","max_tokens":1,"messages":[],"stream":true}',
): OutgoingRequest => ({
  provider: "anthropic",
  model: "m",
  body,
  stream: true,
});

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isVerbatimError(error) ? error.code : String(error);
  }
  return "no error";
}

describe("transport", () => {
  it("sends the body's exact bytes with the key in the provider's header, and streams events", async () => {
    const local = await startLocalProvider("anthropic");
    closers.push(() => local.close());
    local.script.push({
      text: "こんにちは 🌸",
      toolCalls: [{ id: "t1", name: "f", arguments: '{"a": "ü"}' }],
    });
    const body =
      '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"\\u00fc ü 🎉"}]}],"stream":true}';
    const events: string[] = [];
    const stream = streamRound(request(body), { apiKey: "sk-test", baseUrl: local.baseUrl });
    let result;
    for (;;) {
      const next = await stream.next();
      if (next.done === true) {
        result = next.value;
        break;
      }
      events.push(next.value.type);
    }
    expect(local.requests[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(local.requests[0]!.url).toBe("/v1/messages");
    expect(local.requests[0]!.headers["x-api-key"]).toBe("sk-test");
    expect(local.requests[0]!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(events).toContain("text");
    expect(events).toContain("toolCallStart");
    expect(events[events.length - 1]).toBe("done");
    expect(result.message.content).toEqual([
      { type: "text", text: "こんにちは 🌸" },
      { type: "toolCall", id: "t1", name: "f", arguments: '{"a": "ü"}' },
    ]);
  });

  it("retries 429 and 5xx, honouring retry-after, then succeeds", async () => {
    const local = await startLocalProvider("anthropic");
    closers.push(() => local.close());
    local.script.push(
      { status: 429, headers: { "retry-after": "0.05" } },
      { status: 529 },
      { text: "ok" },
    );
    const retries: RetryNotice[] = [];
    const result = await sendRound(request(), {
      apiKey: "k",
      baseUrl: local.baseUrl,
      retryBaseDelayMs: 10,
      onRetry: (notice) => retries.push(notice),
    });
    expect(result.message.content).toEqual([{ type: "text", text: "ok" }]);
    expect(retries.map((retry) => retry.delayMs)).toEqual([50, 20]);
    expect(local.requests).toHaveLength(3);
  });

  it("does not retry a 400, and reports the provider's message", async () => {
    const local = await startLocalProvider("anthropic");
    closers.push(() => local.close());
    local.script.push({ status: 400 });
    try {
      await sendRound(request(), { apiKey: "k", baseUrl: local.baseUrl });
      expect.unreachable();
    } catch (error) {
      expect(isVerbatimError(error) && error.code).toBe("provider_http_error");
      expect(String((error as Error).message)).toContain("scripted 400");
    }
    expect(local.requests).toHaveLength(1);
  });

  it("gives up when retry-after asks for longer than allowed", async () => {
    const http = await server((_request, response) => {
      response.writeHead(503, { "retry-after": "3600" });
      response.end("{}");
    });
    expect(await failure(sendRound(request(), { apiKey: "k", baseUrl: http.url }))).toBe(
      "provider_http_error",
    );
    expect(http.count()).toBe(1);
  });

  it("retries a dropped connection, then reports a network error", async () => {
    const http = await server((request) => request.socket.destroy());
    const code = await failure(
      sendRound(request(), { apiKey: "k", baseUrl: http.url, maxRetries: 1, retryBaseDelayMs: 5 }),
    );
    expect(code).toBe("provider_network_error");
    expect(http.count()).toBe(2);
  });

  it("times out a provider that sends nothing, and stops on abort", async () => {
    const http = await server(() => undefined);
    expect(
      await failure(
        sendRound(request(), { apiKey: "k", baseUrl: http.url, timeoutMs: 100, maxRetries: 0 }),
      ),
    ).toBe("provider_timeout");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(
      await failure(
        sendRound(request(), { apiKey: "k", baseUrl: http.url, signal: controller.signal }),
      ),
    ).toBe("provider_aborted");
  });

  it("a consumer that stops reading ends the request", async () => {
    let closed: () => void = () => undefined;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const http = await server((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"x","model":"m","usage":{"input_tokens":1}}}\n\n',
      );
      const timer = setInterval(() => response.write('event: ping\ndata: {"type":"ping"}\n\n'), 20);
      response.on("close", () => {
        clearInterval(timer);
        closed();
      });
    });
    const stream = streamRound(request(), { apiKey: "k", baseUrl: http.url });
    expect((await stream.next()).value).toMatchObject({ type: "usage" });
    await stream.return(undefined as never);
    await connectionClosed;
  });

  it("reports a stream that ends early", async () => {
    const http = await server((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"x","model":"m","usage":{}}}\n\n',
      );
    });
    expect(await failure(sendRound(request(), { apiKey: "k", baseUrl: http.url }))).toBe(
      "provider_response_invalid",
    );
  });

  it("A26 sends the same exact bytes through a caller's fetch when one is given", async () => {
    const local = await startLocalProvider("anthropic");
    closers.push(() => local.close());
    const body =
      '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"é 😀"}],"stream":true}';
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const viaFetch = await sendRound(request(body), {
      apiKey: "sk-test",
      baseUrl: local.baseUrl,
      fetch: counting,
    });
    const viaHttp = await sendRound(request(body), { apiKey: "sk-test", baseUrl: local.baseUrl });
    expect(calls).toBe(1);
    // The same reply shape either way (the local server numbers its replies).
    expect(viaFetch.message.content.map((block) => block.type)).toEqual(
      viaHttp.message.content.map((block) => block.type),
    );
    expect(viaFetch.stopReason).toBe(viaHttp.stopReason);
    const [first, second] = local.requests.slice(-2);
    expect(first?.body.toString("utf8")).toBe(body);
    expect(second?.body.toString("utf8")).toBe(body);
  });

  it("A26 keeps the connection to the provider alive between requests", async () => {
    const http = await server((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "m",
          content: [{ type: "text", text: "ok" }],
          stop_reason: "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
    const baseUrl = http.url;
    const plain: OutgoingRequest = { ...request('{"model":"m"}'), stream: false };
    for (let index = 0; index < 5; index++) {
      const result = await sendRound(plain, { apiKey: "k", baseUrl });
      expect(result.message.content).toEqual([{ type: "text", text: "ok" }]);
    }
    expect(http.connections()).toBe(1);
  });

  it("reads keys and base URLs from the options, else the environment", () => {
    expect(
      resolveEndpoint("openai-chat", {
        env: { OPENAI_API_KEY: "e", OPENAI_BASE_URL: "http://x/v1" },
      }),
    ).toEqual({
      apiKey: "e",
      baseUrl: "http://x/v1",
    });
    expect(resolveEndpoint("gemini", { apiKey: "o", env: { GEMINI_API_KEY: "e" } }).apiKey).toBe(
      "o",
    );
    expect(resolveEndpoint("gemini", { env: { GOOGLE_API_KEY: "g" } }).apiKey).toBe("g");
    expect(resolveEndpoint("openrouter", { env: { OPENROUTER_API_KEY: "r" } }).baseUrl).toBe(
      "https://openrouter.ai/api/v1",
    );
    try {
      resolveEndpoint("anthropic", { env: {} });
      expect.unreachable();
    } catch (error) {
      expect(isVerbatimError(error) && error.code).toBe("provider_api_key_missing");
    }
    expect(requestUrl("gemini", "gemini-2.5-flash", true, "https://g/v1beta/")).toBe(
      "https://g/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(requestUrl("anthropic", "m", true, "https://api.anthropic.com")).toBe(
      "https://api.anthropic.com/v1/messages",
    );
  });

  it("reads retry-after as seconds, milliseconds or an HTTP date", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after-ms": "150" }))).toBe(150);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(
      3000,
    );
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });
});
