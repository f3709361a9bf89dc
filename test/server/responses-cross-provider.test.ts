/**
 * B2: a conversation started on one provider continues on another through previous_response_id.
 * The upstreams are the local provider servers of test/support/provider-servers (wire formats
 * laid out as the captured bodies under test/fixtures/providers/).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startLocalProvider, type ProviderServer } from "../support/provider-servers/index.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("Responses API across providers", (getDatabase) => {
  let anthropic: ProviderServer;
  let openai: ProviderServer;
  let server: TestServer;
  let client: OpenAI;

  beforeAll(async () => {
    anthropic = await startLocalProvider("anthropic");
    openai = await startLocalProvider("openai-responses");
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: anthropic.baseUrl,
        OPENAI_API_KEY: "sk-proj-test",
        OPENAI_BASE_URL: openai.baseUrl,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const { key } = await server.apiKeyFor(uniqueName("subject"));
    client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await server.app.close();
    await anthropic.close();
    await openai.close();
  });

  it("B2 B4 a tool call made on Anthropic is answered and continued on OpenAI, with aliased call ids", async () => {
    anthropic.script.push({
      text: "Let me look that up.",
      toolCalls: [{ id: "toolu_01CrossProvider", name: "lookup", arguments: '{"q":"tides"}' }],
    });
    const first = await client.responses.create({
      model: "claude-test",
      input: "When is high tide?",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ call_id: "toolu_01CrossProvider", name: "lookup" });

    openai.script.push({ text: "High tide is at 14:05." });
    const second = await client.responses.create({
      model: "gpt-test",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "toolu_01CrossProvider", output: "14:05" }],
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
    });
    expect(second.output_text).toBe("High tide is at 14:05.");
    expect(second.previous_response_id).toBe(first.id);

    const sent = openai.requests[openai.requests.length - 1]?.body.toString("utf8") ?? "";
    expect(sent).toContain("When is high tide?");
    expect(sent).toContain("Let me look that up.");
    expect(sent).toContain('"call_id":"call_1"');
    expect(sent).not.toContain("toolu_01CrossProvider");
    expect(sent).not.toContain(first.id);
  });
});
