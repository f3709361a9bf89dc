/**
 * Issue 18: the end of a recorded call's answer. The client has the whole answer only once the
 * call's bytes are durable (docs/server/recorded-calls.md, "What is written when"), also when the upstream
 * declares a Content-Length (the client then needs no terminator: its last byte is the end);
 * the bytes are passed through unchanged either way; an answer that breaks off upstream ends the
 * client's response and is not recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
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
 * The upstream's ways to answer: sized (Content-Length, one write or two), chunked in one write
 * or in two 300 ms apart (a streamed answer), or broken off after a first piece (sized, or
 * chunked: there the client's end would look like a whole answer).
 */
type Mode = "sized" | "sized-in-two" | "chunked" | "chunked-in-two" | "broken" | "broken-chunked";

const CHUNKED: readonly Mode[] = ["chunked", "chunked-in-two", "broken-chunked"];

async function startUpstream(mode: () => Mode): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const current = mode();
      response.writeHead(200, {
        "content-type": "application/json",
        ...(CHUNKED.includes(current) ? {} : { "content-length": String(ANSWER.length) }),
      });
      if (current === "sized" || current === "chunked") {
        response.end(ANSWER);
      } else if (current === "chunked-in-two") {
        response.write(ANSWER.subarray(0, 10));
        setTimeout(() => response.end(ANSWER.subarray(10)), 300);
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

/**
 * Runs `body` while a PostgreSQL transaction holds a lock that makes a recorded call's insert
 * wait; `release` commits that transaction.
 */
async function whileCommitHeld(
  database: StoreDatabase,
  body: (release: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const location = database.location;
  if (location.dialect !== "postgres") throw new Error("PostgreSQL only");
  const blocker = new pg.Client({ connectionString: location.url });
  await blocker.connect();
  try {
    await blocker.query(`set search_path to ${location.schema ?? "public"}`);
    await blocker.query("begin");
    await blocker.query("lock table ai_gateway_recorded_calls in share mode");
    await body(async () => {
      await blocker.query("commit");
    });
  } finally {
    await blocker.query("rollback").catch(() => undefined);
    await blocker.end();
  }
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
      expect((row?.response ?? Buffer.alloc(0)).equals(ANSWER)).toBe(true);
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
      expect((rows[0]?.response ?? Buffer.alloc(0)).equals(ANSWER)).toBe(true);
    });
  }

  it("writes a streamed answer's pieces as they come, before the upstream has ended it", async () => {
    mode = "chunked-in-two";
    const subject = uniqueName("subject");
    const response = await send(subject);
    const reader = response.body?.getReader();
    if (reader === undefined) throw new Error("no body");
    const started = performance.now();
    const first = await reader.read();
    // The first piece arrives while the upstream still holds the rest (300 ms later).
    expect(performance.now() - started).toBeLessThan(250);
    expect(Buffer.from(first.value ?? []).equals(ANSWER.subarray(0, 10))).toBe(true);
    const rest: Buffer[] = [];
    for (;;) {
      const piece = await reader.read();
      if (piece.done) break;
      rest.push(Buffer.from(piece.value));
    }
    expect(Buffer.concat([first.value ?? new Uint8Array(), ...rest]).equals(ANSWER)).toBe(true);
    await callsPlaced(getDatabase(), subject, 1);
  });

  // On SQLite the commit blocks this process's event loop, and the client runs in it: the
  // order can only be seen on PostgreSQL, where the commit is a round trip.
  it.skipIf(dialect === "sqlite" || postgresUrl === undefined)(
    "gives the client the last byte of a Content-Length answer only after the call's row is committed",
    async () => {
      mode = "sized";
      const subject = uniqueName("subject");
      const database = getDatabase();
      await whileCommitHeld(database, async (release) => {
        let done = false;
        const answer = send(subject).then(async (response) => {
          const bytes = Buffer.from(await response.arrayBuffer());
          done = true;
          return bytes;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(done).toBe(false);
        await release();
        expect((await answer).equals(ANSWER)).toBe(true);
        // The row was committed before the client had the last byte.
        const rows = await database.db
          .selectFrom("ai_gateway_recorded_calls")
          .select("id")
          .where("subject_uid", "=", subject)
          .execute();
        expect(rows).toHaveLength(1);
      });
    },
  );

  // Writes to the client's socket per answer (each wakes the client): an answer the upstream
  // sent in one read leaves in one write when the commit holds the thread (SQLite); on
  // PostgreSQL, whose commit is a round trip, what does not complete it goes while it runs.
  for (const answerMode of ["sized", "chunked"] as const) {
    it(`writes an answer the upstream sent in one read (${answerMode}) in ${answerMode === "chunked" && dialect === "postgres" ? "two writes around" : "one write after"} the commit`, async () => {
      mode = answerMode;
      const subject = uniqueName("subject");
      const writes: number[] = [];
      const count = (_request: IncomingMessage, response: ServerResponse) => {
        const writable = response.socket as unknown as Record<
          string,
          (...args: unknown[]) => unknown
        >;
        for (const name of ["_write", "_writev"]) {
          const original = writable[name]?.bind(writable);
          if (original === undefined) continue;
          writable[name] = (...args: unknown[]) => {
            writes.push(1);
            return original(...args);
          };
        }
        // The next request on this connection counts its own.
        response.once("finish", () => {
          for (const name of ["_write", "_writev"]) delete writable[name];
        });
      };
      server.app.server.once("request", count);
      const { key } = await server.apiKeyFor(subject);
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": key,
          "anthropic-version": "2023-06-01",
        },
        body: JSON.stringify({ model: "claude-test", max_tokens: 10, messages: [] }),
      });
      expect(Buffer.from(await response.arrayBuffer()).equals(ANSWER)).toBe(true);
      expect(writes).toHaveLength(answerMode === "chunked" && dialect === "postgres" ? 2 : 1);
    });
  }

  // PostgreSQL only, as above.
  it.skipIf(dialect === "sqlite" || postgresUrl === undefined)(
    "writes a chunked answer's head and body while the call's commit runs, and its terminator after it",
    async () => {
      mode = "chunked";
      const subject = uniqueName("subject");
      const { key } = await server.apiKeyFor(subject);
      await whileCommitHeld(getDatabase(), async (release) => {
        const body = JSON.stringify({
          model: "claude-test",
          max_tokens: 10,
          messages: [{ role: "user", content: `hello ${subject}` }],
        });
        const port = new URL(baseUrl).port;
        const socket = connect(Number(port), "127.0.0.1");
        const reads: Buffer[] = [];
        const terminator = "\r\n0\r\n\r\n";
        const ended = new Promise<void>((resolve, reject) => {
          socket.on("data", (piece: Buffer) => {
            reads.push(piece);
            if (Buffer.concat(reads).includes(terminator)) resolve();
          });
          socket.on("error", reject);
        });
        socket.write(
          `POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
            `x-api-key: ${key}\r\nanthropic-version: 2023-06-01\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The head and the body's one chunk while the commit waits, not the terminator.
        const before = Buffer.concat(reads).toString("utf8");
        expect(before.startsWith("HTTP/1.1 200")).toBe(true);
        expect(before.toLowerCase()).toContain("transfer-encoding: chunked");
        expect(before).toContain(`${ANSWER.length.toString(16)}\r\n${ANSWER.toString("utf8")}\r\n`);
        expect(before).not.toContain(terminator);
        await release();
        await ended;
        socket.destroy();
      });
    },
  );
});
