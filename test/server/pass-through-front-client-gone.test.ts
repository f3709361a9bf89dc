/**
 * Issue 18 (the pass-through routes' front path, server/pass-through-front.ts): a client that
 * hangs up while its API key is being looked up (on PostgreSQL a key not cached yet is a round
 * trip) gets nothing served and leaves no work counted, so a server closing afterwards does not
 * wait for it forever. Real parts: an HTTP server on loopback, a raw client socket, SQLite; the
 * key lookup is held open by the test to make the hang-up fall inside it.
 */
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { RecordedCalls } from "../../packages/server/src/gateway/recorded-calls.js";
import { NO_UPSTREAM } from "../../packages/server/src/gateway/upstream/config.js";
import type { ApiKeyLookup } from "../../packages/server/src/server/api-key-cache.js";
import { InFlightWork } from "../../packages/server/src/server/in-flight.js";
import { PassThroughFront } from "../../packages/server/src/server/pass-through-front.js";
import { MESSAGES_ROUTE } from "../../packages/server/src/server/routes/pass-through-routes.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { until } from "../support/until.js";

let server: Server | undefined;
let database: StoreDatabase | undefined;

afterEach(async () => {
  await new Promise((resolve) =>
    server === undefined ? resolve(undefined) : server.close(resolve),
  );
  await database?.close();
});

it("serves nothing and counts no work for a client gone during its key's lookup", async () => {
  database = await openDatabase({ dialect: "sqlite", path: ":memory:" });
  await migrateDatabase(database);
  let release: (subject: string) => void = () => undefined;
  let lookups = 0;
  const keys: ApiKeyLookup = {
    caching: false,
    subjectOf: () => {
      lookups++;
      return new Promise((resolve) => (release = resolve));
    },
    close: () => Promise.resolve(),
  };
  const work = new InFlightWork();
  const front = new PassThroughFront();
  front.enable(
    {
      keys,
      limiter: undefined,
      failures: undefined,
      bodyLimit: 1024,
      log: pino({ level: "silent" }),
      work,
      closing: () => false,
      requestId: () => "client-gone",
    },
    [{ route: MESSAGES_ROUTE, config: NO_UPSTREAM, recorder: new RecordedCalls(database) }],
  );
  let routed = 0;
  let requestClosed = false;
  server = createServer((request, response) => {
    request.once("close", () => (requestClosed = true));
    front.route(request, response, () => {
      routed++;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const body = '{"model":"claude-test","max_tokens":1,"messages":[]}';
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  socket.write(
    "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
      `x-api-key: vbk_test\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await until(() => lookups === 1);
  socket.destroy();
  await until(() => requestClosed);
  release("subject-gone");
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(front.served).toBe(0);
  expect(routed).toBe(0);
  expect(work.running).toBe(0);
});
