/**
 * Issue 18, where the cache broke: each recorded call's usage, and whether it kept the
 * cacheable prefix of the previous call of its chain; GET /ai-gateway/conversations/:id/cache
 * and `verbatim cache-report` name the first differing path with both sides.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../packages/library/src/cli/main.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  freshDatabase,
  postgresUrl,
  testDialects,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";
import { TEST_OPERATOR_TOKEN, testServer, type TestServer } from "../support/server.js";
import { callsPlaced } from "../support/recorded-calls.js";

for (const dialect of testDialects) {
  describe.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `cache report [${dialect}]`,
    () => {
      let fresh: FreshDatabase;
      let upstream: RawUpstream;
      let server: TestServer;
      let baseUrl: string;
      let client: Anthropic;
      let subject: string;

      beforeAll(async () => {
        fresh = await freshDatabase(dialect);
        upstream = await startRawUpstream();
        server = await testServer(fresh.database, {
          upstream: upstreamConfigFromEnv({
            ANTHROPIC_API_KEY: "sk-ant-upstream-key",
            ANTHROPIC_BASE_URL: upstream.url,
          }),
        });
        await server.app.listen({ host: "127.0.0.1", port: 0 });
        const address = server.app.server.address();
        const port = typeof address === "object" && address !== null ? address.port : 0;
        baseUrl = `http://127.0.0.1:${port}`;
        subject = uniqueName("subject");
        const { key } = await server.apiKeyFor(subject);
        client = new Anthropic({ apiKey: key, baseURL: baseUrl, maxRetries: 0 });
      });
      afterAll(async () => {
        await server.app.close();
        await upstream.close();
        await fresh.cleanup();
      });

      it("reports kept prefixes, names the break of a changed system prompt, and counts the loss", async () => {
        const history: Anthropic.MessageParam[] = [{ role: "user", content: "Hello" }];
        const send = (system: string) =>
          client.messages.create({
            model: "claude-sonnet-4-5",
            max_tokens: 100,
            system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
            messages: history,
          });
        upstream.usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 1000 };
        await send("You are terse.");
        history.push(
          { role: "assistant", content: "stub answer" },
          { role: "user", content: "More" },
        );
        upstream.usage = { input: 20, output: 5, cacheRead: 1000, cacheWrite: 15 };
        await send("You are terse.");
        history.push(
          { role: "assistant", content: "stub answer" },
          { role: "user", content: "Again" },
        );
        // The system prompt changed: the whole prompt is written to the cache again.
        upstream.usage = { input: 20, output: 5, cacheRead: 0, cacheWrite: 1050 };
        await send("You are terse. Today is Tuesday.");

        await callsPlaced(fresh.database, subject);
        const { conversation_id } = await fresh.database.db
          .selectFrom("ai_gateway_recorded_calls")
          .select("conversation_id")
          .where("subject_uid", "=", subject)
          .executeTakeFirstOrThrow();
        const response = await fetch(
          `${baseUrl}/ai-gateway/conversations/${conversation_id}/cache`,
          {
            headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
          },
        );
        expect(response.status).toBe(200);
        const report = (await response.json()) as {
          summary: {
            calls: number;
            hit_ratio: number;
            lost_tokens: number;
            lost_dollars: number | null;
            breaks: unknown[];
          };
          calls: {
            cache: string;
            lost_tokens: number;
            difference: Record<string, unknown> | null;
          }[];
        };
        expect(report.calls.map((call) => call.cache)).toEqual(["first", "kept", "broken"]);
        expect(report.calls[1]?.lost_tokens).toBe(0);
        expect(report.calls[2]?.difference).toMatchObject({
          path: "$.system[0].text",
          before: '"You are terse."',
          after: '"You are terse. Today is Tuesday."',
        });
        expect(report.calls[2]?.lost_tokens).toBe(1015);
        expect(report.summary.calls).toBe(3);
        expect(report.summary.hit_ratio).toBeCloseTo(1000 / (1010 + 1035 + 1070), 6);
        expect(report.summary.breaks).toHaveLength(1);
        expect(report.summary.lost_dollars).toBeGreaterThan(0);

        const missing = await fetch(`${baseUrl}/ai-gateway/conversations/conv_nothing/cache`, {
          headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
        });
        expect(missing.status).toBe(404);

        const io = bufferIO();
        expect(
          await main(["cache-report", "--db", fresh.locationText, "--subject", subject], io),
        ).toBe(0);
        const text = io.out().toString("utf8");
        expect(text).toContain(
          `${conversation_id} (subject ${subject}): 3 call(s), cache hit 32.1%, lost 1015 tokens, $`,
        );
        expect(text).toContain("broke at $.system[0].text");
        expect(text).toContain('after:  "You are terse. Today is Tuesday."');

        const json = bufferIO();
        expect(
          await main(
            ["cache-report", "--db", fresh.locationText, "--subject", subject, "--json"],
            json,
          ),
        ).toBe(0);
        const parsed = JSON.parse(json.out().toString("utf8")) as { conversations: unknown[] };
        expect(parsed.conversations).toHaveLength(1);

        const later = bufferIO();
        expect(
          await main(
            [
              "cache-report",
              "--db",
              fresh.locationText,
              "--subject",
              subject,
              "--since",
              "2999-01-01T00:00:00Z",
            ],
            later,
          ),
        ).toBe(0);
        expect(later.out().toString("utf8")).toBe("no recorded calls\n");

        const bad = bufferIO();
        expect(
          await main(["cache-report", "--db", fresh.locationText, "--since", "yesterday"], bad),
        ).not.toBe(0);
        expect(bad.err()).toContain("is not a time");
      });
    },
  );
}
