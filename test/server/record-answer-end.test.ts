/**
 * Issue 18: the end of a recorded call's answer. The client has the whole answer only once the
 * call's bytes are durable (docs/server.md, "What is written when"), also when the upstream
 * declares a Content-Length (the client then needs no terminator: its last byte is the end);
 * the bytes are passed through unchanged either way; an answer that breaks off upstream ends the
 * client's response and is not recorded.
 */
import { createServer, type Server } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, postgresUrl, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { testServer, type TestServer } from "../support/server.js";

const ANSWER = Buffer.from(
  JSON.stringify({
    id: "msg_01Sized",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text: "a sized answer" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 4, output_tokens: 3 },
  }),
);

/**
 * The upstream's ways to answer: sized (Content-Length, one write or two), or broken off after
 * a first piece (sized, or chunked: there the client's end would look like a whole answer).
 */
type Mode = "sized" | "sized-in-two" | "broken" | "broken-chunked";

async function startUpstream(mode: () => Mode): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const current = mode();
      response.writeHead(200, {
        "content-type": "application/json",
        ...(current === "broken-chunked" ? {} : { "content-length": String(ANSWER.length) }),
      });
      if (current === "sized") {
        response.end(ANSWER);
      } else if (current === "sized-in-two") {
        response.write(ANSWER.subarray(0, 10));
        setTimeout(() => response.end(ANSWER.subarray(10)), 20);
      } else {
        // Broken off: the connection ends after a first piece.
        response.write(ANSWER.subarray(0, 10));
        setTimeout(() => response.socket?.destroy(), 20);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, server };
}

describeEachDialect("the end of a recorded answer", (getDatabase, dialect) => {
  let mode: Mode = "sized";
  let upstream: { url: string; server: Server };
  let server: TestServer;
  let baseUrl: string;

  beforeAll(async () => {
    upstream = await startUpstream(() => mode);
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-upstream-key",
        ANTHROPIC_BASE_URL: upstream.url,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    await server.app.close();
    await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
  });

  async function send(subject: string): Promise<Response> {
    const { key } = await server.apiKeyFor(subject);
    return fetch(`${baseUrl}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 10,
        messages: [{ role: "user", content: `hello ${subject}` }],
      }),
    });
  }

  for (const sized of ["sized", "sized-in-two"] as const) {
    it(`passes an answer with a Content-Length (${sized === "sized" ? "one piece" : "two pieces"}) through byte for byte and records it`, async () => {
      mode = sized;
      const subject = uniqueName("subject");
      const response = await send(subject);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(200);
      expect(response.headers.get("content-length")).toBe(String(ANSWER.length));
      expect(bytes.equals(ANSWER)).toBe(true);
      await callsPlaced(getDatabase(), subject, 1);
      const [row] = await recordedCallRows(getDatabase(), subject);
      expect(Buffer.from(row?.response_body_base64 ?? "", "base64").equals(ANSWER)).toBe(true);
    });
  }

  for (const broken of ["broken", "broken-chunked"] as const) {
    it(`breaks the client's connection when the upstream's answer breaks off (${broken === "broken" ? "Content-Length" : "chunked"}), and records nothing`, async () => {
      mode = broken;
      const subject = uniqueName("subject");
      const response = await send(subject);
      expect(response.status).toBe(200);
      // The client gets the piece that came, then an error, never an end that looks whole.
      await expect(response.arrayBuffer()).rejects.toThrow();
      // A call recorded later by the same subject is the only one stored.
      mode = "sized";
      await (await send(subject)).arrayBuffer();
      await callsPlaced(getDatabase(), subject, 1);
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(Buffer.from(rows[0]?.response_body_base64 ?? "", "base64").equals(ANSWER)).toBe(true);
    });
  }

  // On SQLite the commit blocks this process's event loop, and the client runs in it: the
  // order can only be seen on PostgreSQL, where the commit is a round trip.
  it.skipIf(dialect === "sqlite" || postgresUrl === undefined)(
    "gives the client the last byte of a Content-Length answer only after the call's row is committed",
    async () => {
      mode = "sized";
      const subject = uniqueName("subject");
      const database = getDatabase();
      const location = database.location;
      if (location.dialect !== "postgres") throw new Error("PostgreSQL only");
      // A transaction holding a lock that makes the call's insert wait.
      const blocker = new pg.Client({ connectionString: location.url });
      await blocker.connect();
      try {
        await blocker.query(`set search_path to ${location.schema ?? "public"}`);
        await blocker.query("begin");
        await blocker.query("lock table ai_gateway_recorded_calls in share mode");
        let done = false;
        const answer = send(subject).then(async (response) => {
          const bytes = Buffer.from(await response.arrayBuffer());
          done = true;
          return bytes;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(done).toBe(false);
        await blocker.query("commit");
        expect((await answer).equals(ANSWER)).toBe(true);
        // The row was committed before the client had the last byte.
        const rows = await database.db
          .selectFrom("ai_gateway_recorded_calls")
          .select("id")
          .where("subject_uid", "=", subject)
          .execute();
        expect(rows).toHaveLength(1);
      } finally {
        await blocker.query("rollback").catch(() => undefined);
        await blocker.end();
      }
    },
  );
});
