/**
 * Regression: "PostgreSQL answers 500 (and logs a stack trace) to a NUL in ids" (issue 15).
 * `GET /v1/responses/%00` and every other route taking an id in its path answered 500 on
 * PostgreSQL (which refuses NUL in text) and 404 on SQLite. Ids are now checked for the shape the
 * server gives them out in before any query: every route of the route table, with a NUL, a
 * control character, a space or an id of 101–200 characters (which Fastify's router refused with
 * its own 414), answers 404 `resource_not_found` in the error shape on both databases, and
 * nothing is logged as an error.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

interface RouteWithId {
  readonly method: string;
  readonly path: string;
}

/** Every documented route with an `{id}` in its path. */
function routesWithIds(document: { paths?: Record<string, Record<string, unknown>> }) {
  const routes: RouteWithId[] = [];
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    if (!path.includes("{id}")) continue;
    for (const method of Object.keys(methods)) routes.push({ method: method.toUpperCase(), path });
  }
  return routes;
}

describeEachDialect("a NUL in ids", (getDatabase) => {
  let server: TestServer;
  let caller: { authorization: string };
  const errorLines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n")) {
          if (line.includes('"level":50') || line.includes('"level":60')) errorLines.push(line);
        }
        done();
      },
    });
    server = await testServer(getDatabase(), { logger: pino({ level: "info" }, sink) });
    caller = await server.apiKeyFor(uniqueName("subject"));
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("answers 404 resource_not_found, never 500, on every route that takes an id", async () => {
    const routes = routesWithIds(server.app.swagger() as never);
    expect(routes.length).toBeGreaterThanOrEqual(9);
    const badIds = ["%00", "msg_%00", "a%01b", "has%20space", "%C3%A9t%C3%A9", "y".repeat(201)];
    for (const route of routes) {
      for (const id of badIds) {
        const reply = await server.app.inject({
          method: route.method as "GET",
          url: route.path.replace("{id}", id),
          headers: route.path.startsWith("/v1/") ? caller : server.operator,
          ...(route.method === "POST" ? { payload: {} } : {}),
        });
        const where = `${route.method} ${route.path} with id ${id.slice(0, 20)}`;
        expect(reply.statusCode, where).toBe(404);
        const body = reply.json();
        expect(body.error.code, where).toBe("resource_not_found");
        expect(body.error.where, where).toBe("path.id");
        expect(body.error.request_id, where).toBe(reply.headers["x-request-id"]);
      }
    }
    expect(errorLines).toEqual([]);
  });

  it("an id of the right shape that names nothing reaches its route (101–200 characters too, not 414)", async () => {
    for (const route of routesWithIds(server.app.swagger() as never)) {
      for (const id of ["msg_0000000000000000000000missing", "x".repeat(150), "z".repeat(200)]) {
        const reply = await server.app.inject({
          method: route.method as "GET",
          url: route.path.replace("{id}", id),
          headers: route.path.startsWith("/v1/") ? caller : server.operator,
          ...(route.method === "POST" ? { payload: {} } : {}),
        });
        const where = `${route.method} ${route.path} with an id of ${id.length} characters`;
        expect([400, 404], where).toContain(reply.statusCode);
        expect(reply.json().error.where, where).not.toBe("path.id");
      }
    }
  });

  it("id fields of a body are held to the same shape (404, nothing queried)", async () => {
    const reply = await server.app.inject({
      method: "POST",
      url: "/v1/background-agent-jobs",
      headers: caller,
      payload: { conversation_id: "conv_\u0001" },
    });
    expect([400, 404]).toContain(reply.statusCode);
    expect(reply.json().error.where).toBe("body.conversation_id");
    expect(errorLines).toEqual([]);
  });
});
