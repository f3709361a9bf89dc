/**
 * Regression: "22 error replies per database bypass the documented error shape" (issue 15).
 * Fastify's own 414 for ids of 101–200 characters, its 400 for a bad percent-encoding, Node's
 * 431 for large headers and 400 for unreadable requests, 503 while closing, 417 for an `Expect`
 * it cannot meet: each had a body of its own. Now every reply the server sends has the one error
 * shape (docs/errors.md) and a registered code whose status it carries. This test walks the route
 * table (every documented route and method) with malformed inputs over a real socket, on both
 * databases, and checks each reply.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  allErrorCodes,
  httpStatusOf,
  type ErrorCode,
} from "../../packages/library/src/core/error-codes.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { rawExchange, rawRequest, requestText, type RawReply } from "../support/raw-http.js";
import { testServer, type TestServer } from "../support/server.js";

const documentedCodes = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
const registered = new Set(allErrorCodes().map((definition) => definition.code));
const ERROR_FIELDS = new Set([
  "code",
  "message",
  "type",
  "param",
  "where",
  "hint",
  "details",
  "request_id",
]);
const BODY_LIMIT = 4096;

/** Checks one reply: the error shape, a documented code, its status; returns the code. */
function expectErrorShape(reply: RawReply, label: string, status?: number): string {
  expect(reply.status, `${label}: a reply`).toBeGreaterThanOrEqual(400);
  if (status !== undefined) expect(reply.status, label).toBe(status);
  expect(reply.headers["content-type"], label).toMatch(/^application\/json/);
  const body = JSON.parse(reply.body) as Record<string, unknown>;
  expect(Object.keys(body), label).toEqual(["error"]);
  const error = body["error"] as Record<string, unknown>;
  for (const key of Object.keys(error))
    expect(ERROR_FIELDS.has(key), `${label}: ${key}`).toBe(true);
  for (const key of ["code", "message", "request_id"]) {
    expect(typeof error[key], `${label}: ${key}`).toBe("string");
  }
  for (const key of ["where", "hint"]) {
    if (key in error) expect(typeof error[key], `${label}: ${key}`).toBe("string");
  }
  const code = error["code"] as string;
  expect(registered.has(code), `${label}: ${code} is registered`).toBe(true);
  expect(documentedCodes, `${label}: ${code} in docs/errors.md`).toContain(`\`${code}\``);
  expect(reply.status, `${label}: the status of ${code}`).toBe(httpStatusOf(code as ErrorCode));
  expect(error["request_id"], `${label}: request id`).toBe(reply.headers["x-request-id"]);
  return code;
}

interface Route {
  readonly method: string;
  readonly path: string;
}

function documentedRoutes(app: FastifyInstance): Route[] {
  const document = app.swagger() as { paths?: Record<string, Record<string, unknown>> };
  const routes: Route[] = [];
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    for (const method of Object.keys(methods)) routes.push({ method: method.toUpperCase(), path });
  }
  return routes;
}

describeEachDialect("error replies in the documented shape", (getDatabase) => {
  let server: TestServer;
  let port: number;
  let caller: { authorization: string };
  const seen = new Map<string, number>();

  const send = async (label: string, request: Buffer, status?: number) => {
    const code = expectErrorShape(await rawRequest(port, request), label, status);
    seen.set(code, (seen.get(code) ?? 0) + 1);
    return code;
  };

  beforeAll(async () => {
    server = await testServer(getDatabase(), {
      bodyLimitBytes: BODY_LIMIT,
      failedAuthenticationLimit: false,
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    port = (server.app.server.address() as { port: number }).port;
    caller = await server.apiKeyFor(uniqueName("subject"));
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("walks every route and method with malformed inputs: every reply has the shape", async () => {
    const routes = documentedRoutes(server.app);
    expect(routes.length).toBeGreaterThanOrEqual(15);
    const methodsOf = new Map<string, Set<string>>();
    for (const route of routes) {
      methodsOf.set(route.path, (methodsOf.get(route.path) ?? new Set()).add(route.method));
    }
    for (const route of routes) {
      const credential =
        route.path === "/healthz"
          ? {}
          : route.path.startsWith("/v1/") || route.path.startsWith("/v1beta/")
            ? { Authorization: caller.authorization }
            : { Authorization: server.operator.authorization };
      const url = (id: string) => route.path.replace("{id}", id);
      const label = (what: string) => `${route.method} ${route.path} ${what}`;
      const json = { ...credential, "Content-Type": "application/json" };
      if (route.path.includes("{id}")) {
        await send(label("NUL id"), requestText(route.method, url("%00"), json, "{}"), 404);
        await send(
          label("id of 2000 characters"),
          requestText(route.method, url("i".repeat(2000)), json, "{}"),
          414,
        );
        await send(
          label("bad percent-encoding"),
          requestText(route.method, url("%zz"), json, "{}"),
          400,
        );
        await send(
          label("percent-encoded non-UTF-8"),
          requestText(route.method, url("%ff%fe"), json, "{}"),
          400,
        );
      }
      const concrete = url("msg_0000000000000000000000missing");
      if (route.path !== "/healthz") {
        await send(label("no credential"), requestText(route.method, concrete), 401);
      }
      for (const other of ["DELETE", "PUT", "PATCH"]) {
        if (methodsOf.get(route.path)?.has(other)) continue;
        const reply = await rawRequest(port, requestText(other, concrete, credential));
        expectErrorShape(reply, label(`as ${other}`), 405);
        expect(reply.headers["allow"], label(`as ${other}`)).toContain(route.method);
      }
      if (route.method !== "POST") continue;
      await send(
        label("text/plain"),
        requestText("POST", concrete, { ...credential, "Content-Type": "text/plain" }, "{}"),
        415,
      );
      await send(label("no Content-Type"), requestText("POST", concrete, credential, "{}"), 415);
      await send(
        label("latin-1 charset"),
        requestText(
          "POST",
          concrete,
          { ...json, "Content-Type": "application/json; charset=latin1" },
          "{}",
        ),
        415,
      );
      await send(label("invalid JSON"), requestText("POST", concrete, json, '{"a": '), 400);
      await send(
        label("repeated key"),
        requestText("POST", concrete, json, '{"a": 1, "a": 2}'),
        400,
      );
      await send(
        label("invalid UTF-8"),
        requestText("POST", concrete, json, Buffer.from([0x22, 0xff, 0x22])),
        400,
      );
      await send(label("empty body"), requestText("POST", concrete, json, ""));
      await send(
        label("oversize body"),
        requestText("POST", concrete, json, `"${"x".repeat(BODY_LIMIT)}"`),
        413,
      );
      await send(label("wrong body type"), requestText("POST", concrete, json, "[1, 2]"));
    }
  });

  it("unknown routes, unreadable requests, huge headers and odd Expect headers have the shape", async () => {
    await send("unknown route", requestText("GET", "/no/such/route"), 404);
    await send("unknown route, bad encoding", requestText("GET", "/no/%zz"), 400);
    await send("unknown method", requestText("FOO", "/healthz"), 400);
    await send(
      "huge headers",
      requestText("GET", "/healthz", { "X-Big": "a".repeat(20_000) }),
      431,
    );
    await send(
      "huge headers before auth",
      requestText("GET", "/v1/responses/x", { Cookie: "c".repeat(40_000) }),
      431,
    );
    await send(
      "bad Content-Length",
      Buffer.from("POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}"),
      400,
    );
    await send(
      "two Content-Lengths",
      Buffer.from(
        "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
      ),
      400,
    );
    await send("not HTTP", Buffer.from("hello there\r\n\r\n"), 400);
    await send("Expect", requestText("GET", "/healthz", { Expect: "something-else" }), 417);
    await send("OPTIONS", requestText("OPTIONS", "/v1/responses"), 405);
  });

  it("the console page's routes (hidden from the OpenAPI document) answer in the shape too", async () => {
    const webRoot = mkdtempSync(join(tmpdir(), "verbatim-web-"));
    mkdirSync(join(webRoot, "assets"));
    writeFileSync(join(webRoot, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(webRoot, "assets", "app.js"), "export {};");
    const web = await testServer(getDatabase(), { webRoot });
    try {
      await web.app.listen({ host: "127.0.0.1", port: 0 });
      const webPort = (web.app.server.address() as { port: number }).port;
      const check = async (label: string, request: Buffer, status: number) =>
        expectErrorShape(await rawRequest(webPort, request), label, status);
      expect((await rawRequest(webPort, requestText("GET", "/assets/app.js"))).status).toBe(200);
      await check("missing asset", requestText("GET", "/assets/missing.js"), 404);
      await check(
        "asset outside the root",
        requestText("GET", "/assets/..%2F..%2Fpackage.json"),
        404,
      );
      await check("NUL in an asset", requestText("GET", "/assets/a%00.js"), 404);
      await check("bad encoding in an asset", requestText("GET", "/assets/%zz"), 400);
      await check(
        "POST to the page",
        requestText("POST", "/", { "Content-Type": "application/json" }, "{}"),
        405,
      );
      await check("DELETE of an asset", requestText("DELETE", "/assets/app.js"), 405);
    } finally {
      await web.app.close();
      rmSync(webRoot, { recursive: true, force: true });
    }
  });

  it("a request that arrives while the server closes is refused (server_closing), never run", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let counted = 0;
    const closing = await testServer(getDatabase(), {}, (app) => {
      app.get("/test/hold", { schema: { hide: true } }, async () => {
        await held;
        return { held: true };
      });
      app.get("/test/count", { schema: { hide: true } }, async () => ({ count: ++counted }));
    });
    await closing.app.listen({ host: "127.0.0.1", port: 0 });
    const closingPort = (closing.app.server.address() as { port: number }).port;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let closed: Promise<undefined> | undefined;
    const exchange = rawExchange(closingPort, (socket) => {
      socket.write("GET /test/hold HTTP/1.1\r\nHost: x\r\n\r\n");
      void (async () => {
        await pause(100);
        closed = closing.app.close();
        await pause(100);
        // Pipelined behind the request in flight, after close() began.
        socket.write("GET /test/count HTTP/1.1\r\nHost: x\r\n\r\n");
        await pause(100);
        release();
      })();
    });
    const reply = await exchange;
    await closed;
    expect(reply.status).toBe(200);
    expect(reply.headers["connection"]).toBe("close");
    expect(counted).toBe(0);
  });
});
