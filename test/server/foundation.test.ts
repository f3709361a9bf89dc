import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allErrorCodes } from "../../packages/library/src/core/error-codes.js";
import { RateLimiter } from "../../packages/server/src/server/rate-limit.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("server foundation", (getDatabase, dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await testServer(
      getDatabase(),
      { rateLimit: { perMinute: 60, burst: 3 }, bodyLimitBytes: 64 * 1024 },
      (app) => {
        app.post("/test/echo", { schema: { hide: true } }, async (request) => ({
          body: request.body ?? null,
        }));
      },
    );
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("GET /healthz answers 200 without auth on a migrated database", async () => {
    const reply = await server.app.inject({ method: "GET", url: "/healthz" });
    expect(reply.statusCode).toBe(200);
    expect(reply.json()).toEqual({ status: "ok", database: dialect });
  });

  it("gives every request an id, echoed in x-request-id and in errors; a caller's id is kept", async () => {
    const reply = await server.app.inject({ method: "GET", url: "/no/such/route" });
    expect(reply.statusCode).toBe(404);
    const id = reply.headers["x-request-id"];
    expect(typeof id).toBe("string");
    expect(reply.json()).toEqual({
      error: {
        code: "route_not_found",
        message: "no route for GET /no/such/route",
        type: "invalid_request_error",
        param: null,
        hint: "See docs/server/README.md for the routes",
        request_id: id,
      },
    });
    const given = await server.app.inject({
      method: "GET",
      url: "/healthz",
      headers: { "x-request-id": "trace-42" },
    });
    expect(given.headers["x-request-id"]).toBe("trace-42");
    const bad = await server.app.inject({
      method: "GET",
      url: "/healthz",
      headers: { "x-request-id": "has spaces and\u00e9" },
    });
    expect(bad.headers["x-request-id"]).not.toBe("has spaces and\u00e9");
  });

  it("B14 console routes need the operator token (401 in the error shape)", async () => {
    for (const authorization of [undefined, "Bearer wrong", "Basic abc"]) {
      const reply = await server.app.inject({
        method: "GET",
        url: "/ai-gateway/conversations",
        ...(authorization === undefined ? {} : { headers: { authorization } }),
      });
      expect(reply.statusCode).toBe(401);
      expect(reply.json().error.code).toBe("unauthorized");
      expect(reply.json().error.hint).toContain("operator token");
    }
  });

  it("caller routes take a live API key; the operator token is not one; a revoked key is 401", async () => {
    const { revokeApiKey } = await import("../../packages/server/src/gateway/keys/api-keys.js");
    const key = await server.apiKeyFor(uniqueName("subject"));
    const ok = await server.app.inject({
      method: "GET",
      url: "/v1/responses/msg_missing",
      headers: { authorization: key.authorization },
    });
    expect(ok.statusCode).not.toBe(401);
    const operator = await server.app.inject({
      method: "GET",
      url: "/v1/responses/msg_missing",
      headers: server.operator,
    });
    expect(operator.statusCode).toBe(401);
    await revokeApiKey(getDatabase(), key.key);
    const request = () =>
      server.app.inject({
        method: "GET",
        url: "/v1/responses/msg_missing",
        headers: { authorization: key.authorization },
      });
    let revoked = await request();
    // SQLite reads the key every time; a PostgreSQL server keeps valid keys and forgets this
    // one when the change notification arrives, milliseconds after the commit.
    const deadline = performance.now() + 2_000;
    while (dialect === "postgres" && revoked.statusCode !== 401 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      revoked = await request();
    }
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().error.hint).toContain("verbatim keys create");
  });

  it("429 from the per-key rate limit, with Retry-After; other keys are not affected", async () => {
    const first = await server.apiKeyFor(uniqueName("subject"));
    const second = await server.apiKeyFor(uniqueName("subject"));
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) {
      const reply = await server.app.inject({
        method: "GET",
        url: "/v1/responses/msg_missing",
        headers: { authorization: first.authorization },
      });
      statuses.push(reply.statusCode);
      if (reply.statusCode === 429) {
        expect(reply.json().error.code).toBe("rate_limited");
        expect(Number(reply.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      }
    }
    expect(statuses.slice(0, 3)).not.toContain(429);
    expect(statuses.slice(3)).toEqual([429, 429]);
    const other = await server.app.inject({
      method: "GET",
      url: "/v1/responses/msg_missing",
      headers: { authorization: second.authorization },
    });
    expect(other.statusCode).not.toBe(429);
  });

  it("413 for a body over the limit, 400 invalid_json for bad JSON, 415 for another media type", async () => {
    const big = await server.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ text: "x".repeat(70 * 1024) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.code).toBe("payload_too_large");

    const duplicate = await server.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: '{"a": 1, "a": 2}',
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json().error.code).toBe("invalid_json");
    expect(duplicate.json().error.where).toContain("line 1");

    const proto = await server.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: '{"__proto__": {"polluted": true}}',
    });
    expect(proto.statusCode).toBe(200);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();

    const text = await server.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "text/plain" },
      payload: "hello",
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe("unsupported_media_type");
  });
});

describe("server error codes", () => {
  it("map to the statuses the API promises (400/401/404/413/429/502/504)", () => {
    const statusOf = new Map(allErrorCodes().map((code) => [code.code, code.httpStatus]));
    expect(statusOf.get("invalid_request")).toBe(400);
    expect(statusOf.get("unauthorized")).toBe(401);
    expect(statusOf.get("resource_not_found")).toBe(404);
    expect(statusOf.get("payload_too_large")).toBe(413);
    expect(statusOf.get("rate_limited")).toBe(429);
    expect(statusOf.get("upstream_failed")).toBe(502);
    expect(statusOf.get("upstream_timeout")).toBe(504);
  });
});

describe("rate limiter", () => {
  it("refills at perMinute and caps at burst", () => {
    let now = 0;
    const limiter = new RateLimiter({ perMinute: 60, burst: 2 }, () => now);
    expect([limiter.take("k"), limiter.take("k"), limiter.take("k")]).toEqual([0, 0, 1]);
    now += 1000;
    expect(limiter.take("k")).toBe(0);
    expect(limiter.take("k")).toBe(1);
    now += 60_000;
    expect([limiter.take("k"), limiter.take("k"), limiter.take("k")]).toEqual([0, 0, 1]);
  });
});
