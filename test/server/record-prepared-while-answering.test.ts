/**
 * Issue 33, recording overhead: the request's part of a recorded call's bodies (its diff
 * against the subject's recent request, the chunk lookups, the new pieces compressed) needs
 * nothing of the answer, so the pass-through routes prepare it while the upstream answers; only
 * the answer's part and the commit are left between the upstream's last byte and the client's
 * (docs/server/recorded-calls.md, "What is written when"). The bytes stay exact.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import {
  BodyStore,
  type PreparedRequest,
} from "../../packages/server/src/gateway/recording/bodies/body-store.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import {
  FIXED_ANSWER,
  startFixedAnswerUpstream,
  type FixedAnswerUpstream,
} from "../support/fixed-answer-upstream.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { testServer, type TestServer } from "../support/server.js";

const ANSWER = Buffer.from(FIXED_ANSWER);

/** The request parts prepared, each with whether it was ready when the upstream answered. */
interface Prepared {
  readonly request: Buffer;
  readonly result: Promise<PreparedRequest>;
  settled: boolean;
}

describeEachDialect(
  "a recorded call's request prepared while the upstream answers",
  (getDatabase) => {
    const prepared: Prepared[] = [];
    const answeredAfterPrepared: boolean[] = [];
    let upstream: FixedAnswerUpstream;
    let server: TestServer;
    let baseUrl: string;

    beforeAll(async () => {
      // The upstream answers once the request's part is prepared (at most 5 s later).
      upstream = await startFixedAnswerUpstream(async (body) => {
        const deadline = Date.now() + 5_000;
        const mine = () => prepared.find((entry) => entry.request.equals(body));
        while (mine()?.settled !== true && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        answeredAfterPrepared.push(mine()?.settled === true);
      });
      server = await testServer(getDatabase(), {
        upstream: upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-upstream-key",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
      });
      await server.app.listen({ host: "127.0.0.1", port: 0 });
      const own = server.app.server.address();
      baseUrl = `http://127.0.0.1:${typeof own === "object" && own !== null ? own.port : 0}`;
    });
    afterEach(() => {
      vi.restoreAllMocks();
      prepared.length = 0;
      answeredAfterPrepared.length = 0;
    });
    afterAll(async () => {
      await server.app.close();
      await upstream.close();
    });

    it("prepares the request's part before the upstream answers, and keeps the call from it byte for byte", async () => {
      const original = BodyStore.prototype.prepareRequest;
      vi.spyOn(BodyStore.prototype, "prepareRequest").mockImplementation(function (
        this: BodyStore,
        ...args: Parameters<BodyStore["prepareRequest"]>
      ) {
        const result = original.apply(this, args);
        const entry: Prepared = { request: args[1], result, settled: false };
        prepared.push(entry);
        void result.finally(() => {
          entry.settled = true;
        });
        return result;
      });
      const responseParts = vi.spyOn(BodyStore.prototype, "prepareResponse");
      const whole = vi.spyOn(BodyStore.prototype, "prepare");
      const subject = uniqueName("prepared");
      const { key } = await server.apiKeyFor(subject);
      const history: unknown[] = [];
      const sent: Buffer[] = [];
      for (let turn = 0; turn < 3; turn++) {
        history.push({ role: "user", content: `turn ${turn}: ${"words ".repeat(2_000)}` });
        const body = Buffer.from(
          JSON.stringify({ model: "claude-test", max_tokens: 10, messages: history }),
        );
        sent.push(body);
        const response = await fetch(`${baseUrl}/v1/messages`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
          },
          body,
        });
        expect(Buffer.from(await response.arrayBuffer()).equals(ANSWER)).toBe(true);
        history.push({ role: "assistant", content: [{ type: "text", text: "answered" }] });
      }
      await callsPlaced(getDatabase(), subject, 3);

      // Each request's part was ready before its upstream answered, and was what the keep used.
      expect(answeredAfterPrepared).toEqual([true, true, true]);
      expect(
        prepared.map((entry, index) => entry.request.equals(sent[index] ?? Buffer.alloc(0))),
      ).toEqual([true, true, true]);
      const made = await Promise.all(prepared.map((entry) => entry.result));
      expect(responseParts.mock.calls.map((call) => call[0])).toEqual(made);
      expect(whole).not.toHaveBeenCalled();
      // The later requests were prepared as diffs of the earlier ones.
      expect(made.map((part) => part.base !== undefined)).toEqual([false, true, true]);

      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.map((row, index) => row.request.equals(sent[index] ?? Buffer.alloc(0)))).toEqual([
        true,
        true,
        true,
      ]);
      expect(rows.every((row) => row.response.equals(ANSWER))).toBe(true);
    });
  },
);
