/**
 * Issue 31, item 5 (security probe): "Pass-through error text and headers: upstream error text
 * is returned and stored unscrubbed (masked key fragments, internal host names), unlike
 * `/v1/responses`; upstream `set-cookie` and organisation headers reach callers; callers'
 * `OpenAI-Organization` / `OpenAI-Project` headers are forwarded; `x-amz-security-token` is
 * stored with the recorded headers." Each is held over HTTP and injected.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { testServer, type TestServer } from "../support/server.js";

const OPENAI_KEY = `sk-proj-${"k".repeat(40)}`;
const ANTHROPIC_KEY = `sk-ant-api03-${"q".repeat(40)}`;
const MASKED = "sk-proj-********************************wxyz";

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** An upstream that keeps each request's headers and answers what the test sets. */
class ScriptedUpstream {
  readonly requests: IncomingHttpHeaders[] = [];
  answer: Answer = { status: 200, headers: {}, body: Buffer.alloc(0) };
  readonly server: Server = createServer((request, response) => {
    this.requests.push(request.headers);
    request.resume();
    request.on("end", () => {
      response.writeHead(this.answer.status, this.answer.headers);
      response.end(this.answer.body);
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  }
}

/** The headers these tests look at, as a fetch response has them. */
const LOOKED_AT = [
  "content-encoding",
  "content-length",
  "set-cookie",
  "openai-organization",
  "openai-project",
  "anthropic-organization-id",
  "x-kept",
];
function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of LOOKED_AT) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

describeEachDialect("issue 31: pass-through error text and headers", (getDatabase) => {
  const upstream = new ScriptedUpstream();
  let server: TestServer;
  let allowing: TestServer;
  let baseUrl: string;
  let host: string;

  const serverWith = (extra: Record<string, string>) =>
    testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        ANTHROPIC_BASE_URL: upstream.url,
        OPENAI_API_KEY: OPENAI_KEY,
        OPENAI_BASE_URL: `${upstream.url}/v1`,
        ...extra,
      }),
    });

  beforeAll(async () => {
    await upstream.start();
    host = new URL(upstream.url).host;
    server = await serverWith({});
    allowing = await serverWith({ VERBATIM_FORWARD_ORGANIZATION_HEADERS: "on" });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    await server.app.close();
    await allowing.app.close();
    await new Promise((resolve) => upstream.server.close(resolve));
  });

  /** One call over HTTP and one injected: status, headers and body text of each. */
  async function bothWays(
    path: string,
    key: string,
    headers: Record<string, string> = {},
    target: TestServer = server,
  ) {
    const body = JSON.stringify({
      model: path.includes("chat") ? "gpt-test" : "claude-test",
      max_tokens: 1,
      messages: [{ role: "user", content: "hi" }],
    });
    const sent = { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers };
    const replies = [];
    if (target === server) {
      const http = await fetch(`${baseUrl}${path}`, { method: "POST", headers: sent, body });
      replies.push({
        way: "http",
        status: http.status,
        headers: headersOf(http.headers),
        body: await http.text(),
      });
    }
    const injected = await target.app.inject({
      method: "POST",
      url: path,
      headers: sent,
      payload: body,
    });
    replies.push({
      way: "router",
      status: injected.statusCode,
      headers: Object.fromEntries(Object.entries(injected.headers).map(([k, v]) => [k, String(v)])),
      body: injected.body,
    });
    return replies;
  }

  const errorText = () =>
    `invalid x-api-key ${OPENAI_KEY} and ${ANTHROPIC_KEY}; Incorrect API key provided: ${MASKED}; ` +
    `via ${upstream.url}/v1/chat/completions and ${host}`;
  const secrets = () => [OPENAI_KEY, ANTHROPIC_KEY, MASKED, host];

  it("issue 31: an upstream error answer is scrubbed before the caller and the store see it, plain or gzip", async () => {
    const subject = uniqueName("subject");
    const { key } = await server.apiKeyFor(subject);
    const json = JSON.stringify({ error: { type: "invalid_request_error", message: errorText() } });
    let calls = 0;
    for (const encoded of [false, true]) {
      upstream.answer = {
        status: 401,
        headers: {
          "content-type": "application/json",
          ...(encoded ? { "content-encoding": "gzip" } : {}),
        },
        body: encoded ? gzipSync(json) : Buffer.from(json),
      };
      for (const path of ["/v1/messages", "/v1/chat/completions"]) {
        for (const reply of await bothWays(path, key)) {
          calls++;
          const where = `${path} ${reply.way} gzip=${encoded}`;
          expect(reply.status, where).toBe(401);
          for (const secret of secrets())
            expect(reply.body, `${where}: ${secret}`).not.toContain(secret);
          expect(reply.body, where).toContain("[redacted:");
          expect(reply.body, where).toContain("invalid x-api-key");
          expect(reply.headers["content-encoding"], where).toBeUndefined();
          expect(Number(reply.headers["content-length"]), where).toBe(
            Buffer.byteLength(reply.body),
          );
        }
      }
    }
    await callsPlaced(getDatabase(), subject, calls);
    for (const row of await recordedCallRows(getDatabase(), subject)) {
      const stored = row.response.toString("utf8");
      expect(stored).toContain("[redacted:");
      for (const secret of secrets()) expect(stored, secret).not.toContain(secret);
      expect(text(row.response_headers)).not.toContain("content-encoding");
    }
  });

  it("issue 31: upstream set-cookie and organisation headers reach neither the caller nor the store", async () => {
    const subject = uniqueName("subject");
    const { key } = await server.apiKeyFor(subject);
    upstream.answer = {
      status: 200,
      headers: {
        "content-type": "application/json",
        "set-cookie": "__cf_bm=operator-cookie; path=/",
        "openai-organization": "org-operator",
        "openai-project": "proj_operator",
        "anthropic-organization-id": "operator-org-uuid",
        "x-kept": "yes",
      },
      body: Buffer.from('{"id":"msg_1","type":"message","role":"assistant","content":[]}'),
    };
    const replies = await bothWays("/v1/messages", key);
    for (const reply of replies) {
      expect(reply.status, reply.way).toBe(200);
      expect(reply.headers["x-kept"], reply.way).toBe("yes");
      for (const name of [
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
      ]) {
        expect(reply.headers[name], `${reply.way}: ${name}`).toBeUndefined();
      }
    }
    await callsPlaced(getDatabase(), subject, replies.length);
    for (const row of await recordedCallRows(getDatabase(), subject)) {
      const stored = text(row.response_headers);
      expect(stored).toContain("x-kept");
      for (const value of [
        "operator-cookie",
        "org-operator",
        "proj_operator",
        "operator-org-uuid",
      ]) {
        expect(stored, value).not.toContain(value);
      }
    }
  });

  it("issue 31: a caller's OpenAI-Organization and OpenAI-Project go upstream only when the operator allows it; x-amz-security-token never, and it is not stored", async () => {
    const subject = uniqueName("subject");
    const { key } = await server.apiKeyFor(subject);
    upstream.answer = {
      status: 200,
      headers: { "content-type": "application/json" },
      body: Buffer.from("{}"),
    };
    const chosen = {
      "openai-organization": "org-caller-choice",
      "openai-project": "proj_caller_choice",
      "x-amz-security-token": "FwoGZXIvYXdzEXAMPLESESSIONTOKEN",
    };
    const before = upstream.requests.length;
    await bothWays("/v1/chat/completions", key, chosen);
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(2);
    for (const headers of sent) {
      expect(headers["openai-organization"]).toBeUndefined();
      expect(headers["openai-project"]).toBeUndefined();
      expect(headers["x-amz-security-token"]).toBeUndefined();
      expect(headers["authorization"]).toBe(`Bearer ${OPENAI_KEY}`);
    }
    await callsPlaced(getDatabase(), subject, 2);
    for (const row of await recordedCallRows(getDatabase(), subject)) {
      expect(text(row.request_headers)).not.toContain("EXAMPLESESSIONTOKEN");
      expect(text(row.request_headers)).toContain("org-caller-choice");
    }

    const allowedKey = (await allowing.apiKeyFor(uniqueName("subject"))).key;
    const start = upstream.requests.length;
    await bothWays("/v1/chat/completions", allowedKey, chosen, allowing);
    const allowed = upstream.requests.slice(start);
    expect(allowed).toHaveLength(1);
    expect(allowed[0]?.["openai-organization"]).toBe("org-caller-choice");
    expect(allowed[0]?.["openai-project"]).toBe("proj_caller_choice");
    expect(allowed[0]?.["x-amz-security-token"]).toBeUndefined();
  });
});
