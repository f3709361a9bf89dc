/**
 * Regression: "Refused requests still reach the upstream in full" (issue 15). With a kept-alive
 * upstream connection, a request the store then refused (a lone surrogate in the input, the
 * instructions or the model; an empty metadata key; request settings over 4 MiB) was sent to
 * the provider, billed, and never stored. Everything is now checked before the first upstream
 * byte: each refusal below counts the upstream's requests and the stored rows.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("refused requests never reach the upstream", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let alice: { authorization: string };

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    server = await testServer(getDatabase(), {
      bodyLimitBytes: 16 * 1024 * 1024,
      upstream: {
        ...upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        }),
        maxRetries: 0,
        timeoutMs: 2000,
      },
    });
    alice = await server.apiKeyFor(uniqueName("alice"));
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  const countRows = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
          getDatabase().db,
        )
      ).rows[0]?.n,
    );
  const create = (payload: Record<string, unknown>) =>
    server.app.inject({
      method: "POST",
      url: "/v1/responses",
      headers: alice,
      payload: { model: "claude-test", input: "hi", ...payload },
    });

  it("every refusal is answered before the upstream is called: no request sent, nothing stored", async () => {
    // A first answer leaves a kept-alive connection to the upstream.
    const first = await create({});
    expect(first.statusCode, first.body).toBe(200);
    const firstId = first.json().id as string;
    const hugeTool = {
      type: "function",
      name: "huge",
      parameters: { type: "object", description: "z".repeat(4 * 1024 * 1024 + 10) },
    };
    const refusals: [string, Record<string, unknown>][] = [
      ["a lone surrogate in the input", { input: "a\ud800b" }],
      ["a lone surrogate in an input item", { input: [{ role: "user", content: "x\udfff" }] }],
      ["a lone surrogate in the instructions", { instructions: "be \ud800 brief" }],
      ["a lone surrogate in the model", { model: "claude-\ud800" }],
      ["an empty metadata key", { metadata: { "": "x" } }],
      ["request settings over 4 MiB", { tools: [hugeTool] }],
      ["a lone surrogate when continuing", { input: "\udc00", previous_response_id: firstId }],
    ];
    for (const [what, payload] of refusals) {
      const requests = upstream.requests.length;
      const rows = await countRows();
      const reply = await create(payload);
      expect(reply.statusCode, `${what}: ${reply.body}`).toBeGreaterThanOrEqual(400);
      expect(reply.statusCode, what).toBeLessThan(500);
      // Give an upstream request sent anyway the time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(upstream.requests.length, `${what}: upstream requests`).toBe(requests);
      expect(await countRows(), `${what}: stored rows`).toBe(rows);
    }
  });
});
