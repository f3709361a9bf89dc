/**
 * Regression: "No request or idle timeouts" (issue 15). Idle sockets and slow request bodies were
 * never closed, with or without a key, so a client trickling headers (slowloris) or stalling a
 * body held a connection for good. Now headers must arrive within VERBATIM_HEADERS_TIMEOUT_MS,
 * the whole request within VERBATIM_BODY_TIMEOUT_MS (else 408 `request_timeout` in the error
 * shape, connection closed), and a kept-alive connection with no request is closed after
 * VERBATIM_IDLE_TIMEOUT_MS. Tested over real sockets with short timeouts; answering may take
 * longer than any of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { isVerbatimError } from "../../packages/library/src/core/errors.js";
import { DEFAULT_TIMEOUTS, timeoutsFromEnv } from "../../packages/server/src/server/timeouts.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { rawExchange, rawRequest, requestText } from "../support/raw-http.js";
import { testServer, type TestServer } from "../support/server.js";

const HEADERS_MS = 300;
const BODY_MS = 700;
const IDLE_MS = 400;
/** The server checks connections every HEADERS_MS / 4; scheduling on a busy machine adds more. */
const SLACK_MS = 3_000;

describe("timeouts from the environment", () => {
  it("defaults, and each VERBATIM_*_TIMEOUT_MS", () => {
    expect(timeoutsFromEnv({})).toEqual(DEFAULT_TIMEOUTS);
    expect(
      timeoutsFromEnv({
        VERBATIM_HEADERS_TIMEOUT_MS: "2000",
        VERBATIM_BODY_TIMEOUT_MS: "30000",
        VERBATIM_IDLE_TIMEOUT_MS: "5000",
      }),
    ).toEqual({ headersMs: 2000, bodyMs: 30000, idleMs: 5000 });
  });

  it("refuses a typo, 0 and headers later than the body, naming the variable", () => {
    const refusal = (env: Record<string, string>) => {
      try {
        timeoutsFromEnv(env);
      } catch (error) {
        if (isVerbatimError(error)) return { code: error.code, where: error.where };
      }
      return undefined;
    };
    expect(refusal({ VERBATIM_IDLE_TIMEOUT_MS: "5s" })).toEqual({
      code: "invalid_argument",
      where: "VERBATIM_IDLE_TIMEOUT_MS",
    });
    expect(refusal({ VERBATIM_HEADERS_TIMEOUT_MS: "0" })).toEqual({
      code: "invalid_argument",
      where: "VERBATIM_HEADERS_TIMEOUT_MS",
    });
    expect(
      refusal({ VERBATIM_HEADERS_TIMEOUT_MS: "9000", VERBATIM_BODY_TIMEOUT_MS: "8000" }),
    ).toEqual({ code: "invalid_argument", where: "VERBATIM_HEADERS_TIMEOUT_MS" });
  });
});

describeEachDialect("request and idle timeouts", (getDatabase) => {
  let server: TestServer;
  let port: number;
  let caller: { authorization: string };

  beforeAll(async () => {
    server = await testServer(
      getDatabase(),
      { timeouts: { headersMs: HEADERS_MS, bodyMs: BODY_MS, idleMs: IDLE_MS } },
      (app) => {
        app.get("/test/slow-answer", { schema: { hide: true } }, async () => {
          await new Promise((resolve) => setTimeout(resolve, BODY_MS + 500));
          return { answered: true };
        });
      },
    );
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    port = (server.app.server.address() as { port: number }).port;
    caller = await server.apiKeyFor(uniqueName("subject"));
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("a slowloris header trickle is answered 408 request_timeout and closed", async () => {
    let timer: NodeJS.Timeout | undefined;
    const reply = await rawExchange(port, (socket) => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      let line = 0;
      timer = setInterval(() => {
        if (socket.writable) socket.write(`X-Trickle-${line++}: a\r\n`);
      }, 50);
      socket.on("close", () => clearInterval(timer));
    });
    clearInterval(timer);
    expect(reply.closedByServer).toBe(true);
    expect(reply.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(reply.closedAfterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
    expect(reply.status).toBe(408);
    const body = JSON.parse(reply.body) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe("request_timeout");
    expect(body.error.request_id).toBe(reply.headers["x-request-id"]);
  });

  it("a stalled body is answered 408 request_timeout, closed, and nothing is written", async () => {
    const jobs = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*) as n from background_agent_jobs`.execute(
            getDatabase().db,
          )
        ).rows[0]?.n,
      );
    const before = await jobs();
    const reply = await rawExchange(port, (socket) => {
      socket.write(
        "POST /v1/background-agent-jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          `Authorization: ${caller.authorization}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 100\r\n\r\n{"conversation_id": "conv_',
      );
    });
    expect(reply.closedByServer).toBe(true);
    expect(reply.closedAfterMs).toBeGreaterThanOrEqual(BODY_MS - 50);
    expect(reply.closedAfterMs).toBeLessThan(BODY_MS + SLACK_MS);
    expect(reply.status).toBe(408);
    expect((JSON.parse(reply.body) as { error: { code: string } }).error.code).toBe(
      "request_timeout",
    );
    expect(await jobs()).toBe(before);
  });

  it("a connection that sends nothing is closed after the header timeout", async () => {
    const reply = await rawExchange(port, () => undefined);
    expect(reply.closedByServer).toBe(true);
    expect(reply.closedAfterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
    expect(reply.received).toBe("");
  });

  it("a kept-alive connection with no request is closed after the idle timeout", async () => {
    const reply = await rawExchange(port, (socket) => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    });
    expect(reply.status).toBe(200);
    expect(reply.closedByServer).toBe(true);
    expect(reply.closedAfterMs).toBeGreaterThanOrEqual(IDLE_MS - 50);
    // Node keeps an idle kept-alive socket 1 s past keepAliveTimeout before closing it.
    expect(reply.closedAfterMs).toBeLessThan(IDLE_MS + 1_000 + SLACK_MS);
  });

  it("an answer that takes longer than every timeout is not cut", async () => {
    const reply = await rawRequest(port, requestText("GET", "/test/slow-answer"));
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ answered: true });
  });
});
