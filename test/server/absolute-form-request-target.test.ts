/**
 * Issue 31, item 5 (security probe): "Absolute-form request targets: `POST
 * http://evil.example/v1/messages` answers 500; on `/v1/chat/completions` it reaches the upstream
 * as the path `/v1http://evil.example/…`". A request target that is not a path (origin-form,
 * RFC 9112 3.2.1) is answered 400 with the error shape on every route, before anything else,
 * and nothing reaches the upstream. Sent over a raw socket: HTTP clients do not send this form.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { rawRequest, requestText } from "../support/raw-http.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";

describeEachDialect("issue 31: absolute-form request targets", (getDatabase) => {
  let started: RawUpstreamServer;
  let port: number;
  let key: string;

  beforeAll(async () => {
    started = await startRawUpstreamServer(getDatabase());
    port = Number(new URL(started.baseUrl).port);
    key = (await started.server.apiKeyFor(uniqueName("subject"))).key;
  });
  afterAll(async () => {
    await started.close();
  });

  it("issue 31: every route answers an absolute-form target 400 invalid_request, and nothing goes upstream", async () => {
    const exchanges = started.upstream.exchanges.length;
    const body = JSON.stringify({
      model: "claude-test",
      max_tokens: 1,
      messages: [{ role: "user", content: "hi" }],
    });
    const json = { "content-type": "application/json", authorization: `Bearer ${key}` };
    const targets: [string, string, string][] = [
      ["POST", "http://evil.example/v1/messages", body],
      ["POST", "http://evil.example/v1/messages/count_tokens", body],
      ["POST", "http://evil.example/v1/chat/completions", body],
      ["POST", "https://evil.example:8443/v1/responses?x=1", body],
      ["GET", "http://evil.example/healthz", ""],
      ["GET", "http://evil.example/v1/models", ""],
      ["GET", "http://127.0.0.1/api/conversations", ""],
    ];
    for (const [method, target, payload] of targets) {
      const reply = await rawRequest(port, requestText(method, target, json, payload));
      const error = (JSON.parse(reply.body) as { error: Record<string, unknown> }).error;
      expect({ target, status: reply.status, code: error["code"], where: error["where"] }).toEqual({
        target,
        status: 400,
        code: "invalid_request",
        where: "request target",
      });
      expect(error["message"]).toContain("absolute-form");
      expect(error["hint"]).toContain("path");
      expect(reply.headers["x-request-id"]).toBe(error["request_id"]);
    }
    expect(started.upstream.exchanges.length).toBe(exchanges);
    // A path is still served.
    const served = await rawRequest(port, requestText("POST", "/v1/messages", json, body));
    expect(served.status).toBe(200);
  });
});
