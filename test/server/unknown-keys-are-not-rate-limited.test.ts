/**
 * Regression: "Unknown keys are not rate limited" (issue 15). The rate limit counted requests
 * per valid API key only, so a client could try unknown keys (or operator tokens) as fast as the
 * server answered. Now failed authentications are limited per client address: past the limit,
 * every request from the address that needs a credential gets 429
 * `authentication_rate_limited` with Retry-After, in the error shape, a valid credential
 * included, until the window refills; other addresses and their valid keys are unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isVerbatimError } from "../../packages/library/src/core/errors.js";
import {
  clientAddressKey,
  trustedProxiesFromEnv,
} from "../../packages/server/src/server/failed-authentication.js";
import { startServer } from "../../packages/server/src/server/serve.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

const BURST = 3;
/**
 * 60 a minute: one failure comes back every second, so a test's few failures in a row are
 * counted together even on a busy machine.
 */
const PER_MINUTE = 60;

describe("client addresses", () => {
  it("IPv4 as is (also mapped into IPv6), IPv6 by its /64", () => {
    expect(clientAddressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientAddressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientAddressKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(clientAddressKey("2001:0db8:0001:0002:ffff:0:0:abcd")).toBe("2001:db8:1:2::/64");
    expect(clientAddressKey("::1")).toBe("0:0:0:0::/64");
    expect(clientAddressKey("2001:db8:1:3::1")).not.toBe(clientAddressKey("2001:db8:1:2::1"));
  });

  it("VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE must be a whole number (checked before the database)", async () => {
    const error = await startServer({
      database: "/nonexistent-folder/never-opened.sqlite",
      env: { VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE: "twenty" },
    }).catch((caught: unknown) => caught);
    expect(isVerbatimError(error) && error.code).toBe("invalid_argument");
    expect(isVerbatimError(error) && error.where).toBe("VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE");
  });
});

describe("VERBATIM_TRUST_PROXY", () => {
  it("takes addresses, CIDR ranges and proxy-addr's names; refuses anything else", () => {
    expect(trustedProxiesFromEnv({})).toBeUndefined();
    expect(
      trustedProxiesFromEnv({
        VERBATIM_TRUST_PROXY: "10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback",
      }),
    ).toEqual(["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "loopback"]);
    for (const text of ["nginx", "10.0.0.0/33", "10.0.0.1/8/2", "true", "1"]) {
      expect(() => trustedProxiesFromEnv({ VERBATIM_TRUST_PROXY: text }), text).toThrow(
        /VERBATIM_TRUST_PROXY must list proxy addresses/,
      );
    }
  });
});

describeEachDialect("failed authentications per client address", (getDatabase) => {
  let server: TestServer;
  let valid: { authorization: string };

  beforeAll(async () => {
    server = await testServer(getDatabase(), {
      failedAuthenticationLimit: { perMinute: PER_MINUTE, burst: BURST },
    });
    valid = await server.apiKeyFor(uniqueName("subject"));
  });
  afterAll(async () => {
    await server.app.close();
  });

  const call = (remoteAddress: string, authorization?: string, url = "/v1/responses/msg_x") =>
    server.app.inject({
      method: "GET",
      url,
      remoteAddress,
      ...(authorization === undefined ? {} : { headers: { authorization } }),
    });

  it("past the limit an address gets 429 with Retry-After, valid key included; others do not", async () => {
    const attacker = "198.51.100.1";
    for (let attempt = 0; attempt < BURST; attempt++) {
      const reply = await call(attacker, `Bearer vbk_guess_${attempt}`);
      expect(reply.statusCode).toBe(401);
    }
    const blocked = await call(attacker, "Bearer vbk_guess_more");
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(blocked.json()).toEqual({
      error: {
        code: "authentication_rate_limited",
        message: "too many failed authentications from this address",
        type: "rate_limit_error",
        param: null,
        where: "client address",
        hint: `Retry after ${blocked.headers["retry-after"]} s with a valid credential`,
        details: { retry_after_seconds: Number(blocked.headers["retry-after"]) },
        request_id: blocked.headers["x-request-id"],
      },
    });
    // A valid key from the blocked address is refused too: guessing cannot go on.
    expect((await call(attacker, valid.authorization)).statusCode).toBe(429);
    expect((await call(attacker)).statusCode).toBe(429);
    // Another address, with the valid key or a wrong one, is unaffected.
    expect((await call("198.51.100.2", valid.authorization)).statusCode).toBe(404);
    expect((await call("198.51.100.2", "Bearer vbk_wrong")).statusCode).toBe(401);
    // The window refills: one failure comes back every second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await call(attacker, valid.authorization)).statusCode).toBe(404);
  });

  it("wrong operator tokens count too; the right token from another address works", async () => {
    for (let attempt = 0; attempt < BURST; attempt++) {
      expect(
        (await call("192.0.2.9", "Bearer wrong", "/ai-gateway/conversations")).statusCode,
      ).toBe(401);
    }
    const blocked = await call(
      "192.0.2.9",
      server.operator.authorization,
      "/ai-gateway/conversations",
    );
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error.code).toBe("authentication_rate_limited");
    const other = await call(
      "192.0.2.10",
      server.operator.authorization,
      "/ai-gateway/conversations",
    );
    expect(other.statusCode).toBe(200);
  });

  it("requests without any credential are not counted", async () => {
    for (let attempt = 0; attempt < BURST * 3; attempt++) {
      expect((await call("192.0.2.20")).statusCode).toBe(401);
    }
    expect((await call("192.0.2.20", valid.authorization)).statusCode).toBe(404);
  });

  it("addresses of one IPv6 /64 share one limit", async () => {
    for (let attempt = 0; attempt < BURST; attempt++) {
      expect((await call(`2001:db8:7:7::${attempt + 1}`, "Bearer vbk_guess")).statusCode).toBe(401);
    }
    expect((await call("2001:db8:7:7::ff", "Bearer vbk_guess")).statusCode).toBe(429);
    expect((await call("2001:db8:7:8::1", valid.authorization)).statusCode).toBe(404);
  });

  it("behind a trusted proxy the client is X-Forwarded-For's; from anyone else the header is ignored", async () => {
    const proxied = await testServer(getDatabase(), {
      failedAuthenticationLimit: { perMinute: PER_MINUTE, burst: BURST },
      trustedProxies: ["10.9.0.0/16"],
    });
    try {
      const via = (forwardedFor: string, authorization: string, remoteAddress = "10.9.0.5") =>
        proxied.app.inject({
          method: "GET",
          url: "/v1/responses/msg_x",
          remoteAddress,
          headers: { authorization, "x-forwarded-for": forwardedFor },
        });
      for (let attempt = 0; attempt < BURST; attempt++) {
        expect((await via("203.0.113.50", "Bearer vbk_guess")).statusCode).toBe(401);
      }
      expect((await via("203.0.113.50", "Bearer vbk_guess")).statusCode).toBe(429);
      // Another client behind the same proxy is unaffected.
      expect((await via("203.0.113.51", valid.authorization)).statusCode).toBe(404);
      // An untrusted peer cannot choose its address with the header: it is counted itself.
      for (let attempt = 0; attempt < BURST; attempt++) {
        await via(`203.0.113.${100 + attempt}`, "Bearer vbk_guess", "198.51.100.77");
      }
      expect((await via("203.0.113.200", valid.authorization, "198.51.100.77")).statusCode).toBe(
        429,
      );
    } finally {
      await proxied.app.close();
    }
  });
});
