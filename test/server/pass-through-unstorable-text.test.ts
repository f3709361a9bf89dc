/**
 * Issue 31, item 5 (security probe): "PostgreSQL: a NUL in `model` on a pass-through route: the
 * call is served but not recorded (the insert fails on 0x00): an audit bypass." The model is the
 * one string of a recorded route's body that is a column of the call's row: it follows the
 * stored-text rule (docs/server/README.md, "What is stored, and what is refused"), refused with 400
 * before anything goes upstream, as on /v1/responses, so a call that cannot be recorded is never
 * served. The messages are kept byte for byte in the row whatever they hold (a NUL in them is
 * served and recorded). Over HTTP and injected.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";

interface Case {
  readonly name: string;
  readonly path: string;
  /** JSON text: escapes as a client sends them. */
  readonly body: string;
  readonly where: string;
  readonly problem: string;
}

const user = (content: string) => `[{"role":"user","content":${content}}]`;

const CASES: readonly Case[] = [
  {
    name: "a NUL in the model",
    path: "/v1/messages",
    body: `{"model":"claude-test\\u0000x","max_tokens":1,"messages":${user('"hi"')}}`,
    where: "body.model",
    problem: "U+0000 (NUL)",
  },
  {
    name: "a NUL in the model of a chat completion",
    path: "/v1/chat/completions",
    body: `{"model":"gpt-test\\u0000","messages":${user('"hi"')}}`,
    where: "body.model",
    problem: "U+0000 (NUL)",
  },
  {
    name: "a lone surrogate in the model",
    path: "/v1/messages",
    body: `{"model":"claude-\\ud800","max_tokens":1,"messages":${user('"hi"')}}`,
    where: "body.model",
    problem: "lone surrogate",
  },
];

describeEachDialect(
  "issue 31: unstorable text on the recorded pass-through routes",
  (getDatabase) => {
    let started: RawUpstreamServer;

    beforeAll(async () => {
      started = await startRawUpstreamServer(getDatabase());
    });
    afterAll(async () => {
      await started.close();
    });

    it("issue 31: refuses it with 400 invalid_request naming the field, sends nothing upstream and records nothing, over HTTP and through the router", async () => {
      const subject = uniqueName("subject");
      const { key } = await started.server.apiKeyFor(subject);
      const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
      const exchanges = started.upstream.exchanges.length;
      for (const test of CASES) {
        const http = await fetch(`${started.baseUrl}${test.path}`, {
          method: "POST",
          headers,
          body: test.body,
        });
        const injected = await started.server.app.inject({
          method: "POST",
          url: test.path,
          headers,
          payload: test.body,
        });
        for (const [way, status, body] of [
          ["http", http.status, (await http.json()) as { error: Record<string, string> }],
          ["router", injected.statusCode, injected.json<{ error: Record<string, string> }>()],
        ] as const) {
          const { error } = body;
          expect({ test: test.name, way, status, code: error.code, where: error.where }).toEqual({
            test: test.name,
            way,
            status: 400,
            code: "invalid_request",
            where: test.where,
          });
          expect(error.message).toContain(test.problem);
          expect(error.hint).toContain("nothing was written");
        }
      }
      expect(started.upstream.exchanges.length).toBe(exchanges);
      expect(await recordedCallRows(getDatabase(), subject)).toHaveLength(0);
      // count_tokens records nothing: its body is passed through as it is.
      const count = await fetch(`${started.baseUrl}/v1/messages/count_tokens`, {
        method: "POST",
        headers,
        body: (CASES[0] as Case).body,
      });
      expect(count.status).toBe(200);
    });

    it("issue 31: a NUL in a message's text is served and its call recorded byte for byte", async () => {
      const subject = uniqueName("subject");
      const { key } = await started.server.apiKeyFor(subject);
      const body = `{"model":"claude-test","max_tokens":1,"messages":${user('"a\\u0000b"')}}`;
      const reply = await fetch(`${started.baseUrl}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body,
      });
      expect(reply.status).toBe(200);
      await reply.arrayBuffer();
      await callsPlaced(getDatabase(), subject, 1);
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.map((row) => row.requestText)).toEqual([body]);
    });
  },
);
