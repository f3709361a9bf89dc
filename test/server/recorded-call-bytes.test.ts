/**
 * Issue 33, item 3 ("Give the bytes back"): a recorded call's facts and its exact bytes, as
 * sent and as received, from operator routes: GET /ai-gateway/recorded-calls/:id, …/request
 * and …/response, with the recorded content type and content encoding; the cache report's
 * calls link there. Real parts: the server on loopback, an upstream on loopback that answers
 * in Anthropic's wire format (gzip-encoded JSON, and server-sent events), SQLite and PostgreSQL.
 */
import { createServer, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  freshDatabase,
  postgresUrl,
  testDialects,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { TEST_OPERATOR_TOKEN, testServer, type TestServer } from "../support/server.js";

const ANSWER = {
  id: "msg_01Bytes",
  type: "message",
  role: "assistant",
  model: "claude-bytes",
  content: [{ type: "text", text: "bytes back ✓" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 0 },
};
const EVENTS =
  `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { ...ANSWER, content: [] } })}\n\n` +
  `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"streamed"}}\n\n` +
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n` +
  `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\n` +
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`;

/** Answers a streamed request with SSE, any other with gzip-encoded JSON; keeps what it sent. */
class EncodingUpstream {
  readonly sent: Buffer[] = [];
  readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const streamed = Buffer.concat(chunks).toString("utf8").includes('"stream":true');
      const body = streamed
        ? Buffer.from(EVENTS, "utf8")
        : gzipSync(Buffer.from(JSON.stringify(ANSWER), "utf8"));
      this.sent.push(body);
      response.writeHead(200, {
        "content-type": streamed ? "text/event-stream" : "application/json",
        ...(streamed ? {} : { "content-encoding": "gzip" }),
      });
      response.end(body);
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  }
}

for (const dialect of testDialects) {
  describe.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `issue 33: a recorded call's bytes given back [${dialect}]`,
    () => {
      const upstream = new EncodingUpstream();
      let fresh: FreshDatabase;
      const getDatabase = () => fresh.database;
      let server: TestServer;
      let baseUrl: string;
      let key: string;
      let subject: string;
      const operator = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };

      beforeAll(async () => {
        fresh = await freshDatabase(dialect);
        await upstream.start();
        server = await testServer(getDatabase(), {
          upstream: upstreamConfigFromEnv({
            ANTHROPIC_API_KEY: "sk-ant-upstream-key",
            ANTHROPIC_BASE_URL: upstream.url,
          }),
        });
        await server.app.listen({ host: "127.0.0.1", port: 0 });
        const address = server.app.server.address();
        baseUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
        subject = uniqueName("subject");
        key = (await server.apiKeyFor(subject)).key;
      });
      afterAll(async () => {
        await server.app.close();
        await new Promise((resolve) => upstream.server.close(resolve));
        await fresh.cleanup();
      });

      async function call(body: string, path = "/v1/messages?beta=true"): Promise<void> {
        const response = await fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
            "accept-encoding": "gzip",
          },
          body,
        });
        await response.arrayBuffer();
        expect(response.status).toBe(200);
      }

      it("gives each call's request and response back byte for byte, with their type and encoding", async () => {
        // Spacing, key order and an escaped character as the client wrote them: kept as sent.
        const first = `{ "model":"claude-bytes", "max_tokens": 10,\n "messages":[{"role":"user","content":"caf\\u00e9 ✓"}] }`;
        const second = JSON.stringify({
          model: "claude-bytes",
          max_tokens: 10,
          stream: true,
          messages: [
            { role: "user", content: "café ✓" },
            { role: "assistant", content: "bytes back ✓" },
            { role: "user", content: "and streamed?" },
          ],
        });
        await call(first);
        await call(second);
        await callsPlaced(getDatabase(), subject);
        const rows = await recordedCallRows(getDatabase(), subject);
        expect(rows).toHaveLength(2);
        const [one, two] = rows;
        if (one === undefined || two === undefined) throw new Error("two calls were recorded");

        const facts = await fetch(`${baseUrl}/ai-gateway/recorded-calls/${one.id}`, {
          headers: operator,
        });
        expect(facts.status).toBe(200);
        const oneFacts = (await facts.json()) as Record<string, unknown>;
        expect(oneFacts).toMatchObject({
          id: one.id,
          subject_uid: subject,
          conversation_id: one.conversation_id,
          previous_call_id: null,
          wire_format: "anthropic-messages",
          path: "/v1/messages?beta=true",
          model: "claude-bytes",
          status_code: 200,
          redacted: false,
          usage: { input_tokens: 12, output_tokens: 3 },
          request_bytes: Buffer.byteLength(first),
          response_bytes: upstream.sent[0]?.length,
          links: {
            request: `/ai-gateway/recorded-calls/${one.id}/request`,
            response: `/ai-gateway/recorded-calls/${one.id}/response`,
          },
        });
        // Headers without credentials: neither the caller's key nor the operator's.
        expect(JSON.stringify(oneFacts)).not.toContain(key);
        expect(JSON.stringify(oneFacts)).not.toContain("sk-ant-upstream-key");
        expect((oneFacts["response_headers"] as Record<string, string>)["content-encoding"]).toBe(
          "gzip",
        );

        const twoFacts = (await (
          await fetch(`${baseUrl}/ai-gateway/recorded-calls/${two.id}`, { headers: operator })
        ).json()) as Record<string, unknown>;
        expect(twoFacts["previous_call_id"]).toBe(one.id);
        expect(twoFacts["conversation_id"]).toBe(one.conversation_id);

        // The request as the client sent it.
        const request = await fetch(`${baseUrl}/ai-gateway/recorded-calls/${one.id}/request`, {
          headers: operator,
        });
        expect(request.status).toBe(200);
        expect(request.headers.get("content-type")).toBe("application/json");
        expect(Buffer.from(await request.arrayBuffer()).equals(Buffer.from(first, "utf8"))).toBe(
          true,
        );

        // The response as the upstream sent it: still gzip-encoded, named so. Read with a raw
        // socket-level client that does not decode, so the bytes compared are the bytes stored.
        const response = await rawGet(`${baseUrl}/ai-gateway/recorded-calls/${one.id}/response`);
        expect(response.status).toBe(200);
        expect(response.headers["content-encoding"]).toBe("gzip");
        expect(response.headers["content-type"]).toBe("application/json");
        expect(response.body.equals(upstream.sent[0] ?? Buffer.alloc(0))).toBe(true);

        // A streamed answer: the events as they arrived.
        const events = await rawGet(`${baseUrl}/ai-gateway/recorded-calls/${two.id}/response`);
        expect(events.headers["content-type"]).toBe("text/event-stream");
        expect(events.headers["content-encoding"]).toBeUndefined();
        expect(events.body.toString("utf8")).toBe(EVENTS);
        const sentTwo = await fetch(`${baseUrl}/ai-gateway/recorded-calls/${two.id}/request`, {
          headers: operator,
        });
        expect(Buffer.from(await sentTwo.arrayBuffer()).toString("utf8")).toBe(second);

        // Each answer names the call it came from (the console links it there).
        const messages = await new GatewayMessageStore(getDatabase()).listMessages(
          subject,
          one.conversation_id,
        );
        expect(
          messages
            .filter((message) => message.role === "assistant" && message.metadata.gateway.model)
            .map((message) => message.metadata.gateway.recordedCallId),
        ).toEqual([one.id, two.id]);

        // The cache report's calls link to them.
        const report = (await (
          await fetch(`${baseUrl}/ai-gateway/conversations/${one.conversation_id}/cache`, {
            headers: operator,
          })
        ).json()) as { calls: { call_id: string; links: Record<string, string> }[] };
        expect(report.calls.map((entry) => entry.links)).toEqual(
          [one.id, two.id].map((id) => ({
            call: `/ai-gateway/recorded-calls/${id}`,
            request: `/ai-gateway/recorded-calls/${id}/request`,
            response: `/ai-gateway/recorded-calls/${id}/response`,
          })),
        );
      });

      it("verbatim export --call ID --raw request|response writes the same bytes, for the call's subject only", async () => {
        const rows = await recordedCallRows(getDatabase(), subject);
        const first = rows[0];
        if (first === undefined) throw new Error("a call was recorded");
        const exported = async (args: readonly string[]) => {
          const io = bufferIO();
          const code = await main(["export", "--from", fresh.locationText, ...args], io);
          return { code, out: io.out(), err: io.err() };
        };
        const request = await exported([
          "--subject",
          subject,
          "--call",
          first.id,
          "--raw",
          "request",
        ]);
        expect(request.code).toBe(0);
        expect(request.out.toString("utf8")).toBe(first.requestText);
        const response = await exported([
          "--subject",
          subject,
          "--call",
          first.id,
          "--raw",
          "response",
        ]);
        expect(response.code).toBe(0);
        expect(response.out.equals(upstream.sent[0] ?? Buffer.alloc(0))).toBe(true);
        // Another subject's export does not reach the call.
        const other = await exported([
          "--subject",
          uniqueName("other"),
          "--call",
          first.id,
          "--raw",
          "request",
        ]);
        expect(other.code).not.toBe(0);
        expect(other.out.length).toBe(0);
        expect(other.err).toContain("no recorded call");
        // Usage errors: a body to name, and --raw only with --call.
        expect((await exported(["--subject", subject, "--call", first.id])).code).toBe(2);
        expect(
          (await exported(["--subject", subject, "--call", first.id, "--raw", "both"])).code,
        ).toBe(2);
        expect(
          (await exported(["--subject", subject, "--raw", "request", "--job", "job_x"])).code,
        ).toBe(2);
        expect(
          (
            await exported([
              "--subject",
              subject,
              "--call",
              first.id,
              "--raw",
              "request",
              "--to",
              "chatml-jsonl",
            ])
          ).code,
        ).toBe(2);
      });

      it("answers a missing call with 404 and refuses a caller's key (operator routes)", async () => {
        for (const path of ["", "/request", "/response"]) {
          const missing = await fetch(`${baseUrl}/ai-gateway/recorded-calls/call_nothing${path}`, {
            headers: operator,
          });
          expect(missing.status, path).toBe(404);
          expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(
            "resource_not_found",
          );
        }
        const rows = await recordedCallRows(getDatabase(), subject);
        const id = rows[0]?.id ?? "";
        for (const headers of [{}, { authorization: `Bearer ${key}` }]) {
          const refused = await fetch(`${baseUrl}/ai-gateway/recorded-calls/${id}/request`, {
            headers,
          });
          expect(refused.status).toBe(401);
        }
      });
    },
  );
}

/** A GET with the operator token whose body is not decoded (fetch would gunzip it). */
async function rawGet(
  url: string,
): Promise<{ status: number; headers: Record<string, string | undefined>; body: Buffer }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    request(url, { headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: {
            "content-type": response.headers["content-type"],
            "content-encoding": response.headers["content-encoding"],
          },
          body: Buffer.concat(chunks),
        }),
      );
    })
      .on("error", reject)
      .end();
  });
}
