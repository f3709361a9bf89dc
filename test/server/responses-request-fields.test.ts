/**
 * No field of the Responses request is dropped silently (issue 17): every field of the request
 * schema is sent, one at a time, to each of the four wire formats, and it reached the upstream
 * as it is, was mapped to the provider's own field, had a documented no-effect, or was refused
 * with a 400 naming it (and nothing written). The table (request-fields-table.ts) is
 * docs/server/responses.md's conformance table (conformance-table.test.ts holds the two together); a
 * field added to the schema without a row fails the first test. The upstreams are stub
 * models: local servers speaking each provider's wire format, not the providers.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createResponseBodySchema } from "../../packages/server/src/gateway/responses/schemas.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";
import { MODELS, PROVIDER, TABLE, tool } from "./request-fields-table.js";

describeEachDialect("Responses API request fields", (getDatabase) => {
  let stubbed: StubbedServer;

  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
  });
  afterAll(async () => {
    await stubbed.close();
  });

  it("every field of the request schema has a row of the conformance table", () => {
    expect(Object.keys(createResponseBodySchema.shape).sort()).toEqual(Object.keys(TABLE).sort());
  });

  it("each field reached the upstream, was mapped, had no effect as documented, or was refused naming it with nothing written", async () => {
    const subject = uniqueName("fields");
    const { key } = await stubbed.server.apiKeyFor(subject);
    for (const [field, row] of Object.entries(TABLE)) {
      for (const model of MODELS) {
        const outcome = row.outcome[model];
        if ("elsewhere" in outcome) continue;
        const provider = PROVIDER[model];
        const before = stubbed.stubs[provider].requests.length;
        // Requests without previous_response_id may continue a matching stored chain (docs/
        // server.md, "Matching"), so what a request stores is counted around it.
        const rowsBefore = await stubbed.rowCount(subject);
        const body = {
          model,
          input: "hello",
          ...row.with,
          ...(row.value === undefined ? {} : { [field]: row.value }),
        };
        const reply = await stubbed.post("/responses", body, key);
        const label = `${field} at ${provider}: ${JSON.stringify(reply.body)}`;
        if ("refused" in outcome) {
          expect(reply.status, label).toBe(400);
          expect(reply.body.error.where, label).toBe(`body.${field}`);
          expect(stubbed.stubs[provider].requests.length, label).toBe(before);
          expect(await stubbed.rowCount(subject), label).toBe(rowsBefore);
          continue;
        }
        expect(reply.status, label).toBe(200);
        expect(await stubbed.rowCount(subject), label).toBeGreaterThan(rowsBefore);
        expect(stubbed.stubs[provider].requests.length, label).toBe(before + 1);
        const requests = stubbed.stubs[provider].requests;
        outcome.check(stubbed.lastSent(provider), requests[requests.length - 1]?.url ?? "");
      }
    }
  });

  it("max_output_tokens absent is absent, except at Anthropic, which requires max_tokens (the configured default)", async () => {
    for (const model of MODELS) {
      const reply = await stubbed.post("/responses", { model, input: "no limit" });
      expect(reply.status).toBe(200);
    }
    expect(stubbed.lastSent("anthropic").max_tokens).toBe(4096);
    expect(stubbed.lastSent("openai-responses")).not.toHaveProperty("max_output_tokens");
    expect(stubbed.lastSent("gemini")).not.toHaveProperty("generationConfig");
    const chat = stubbed.lastSent("openrouter");
    expect(chat).not.toHaveProperty("max_tokens");
    expect(chat).not.toHaveProperty("max_completion_tokens");
  });

  it("a hosted tool (Codex's web_search) is passed as written to OpenAI Responses, which runs it", async () => {
    const reply = await stubbed.post("/responses", {
      model: "gpt-f",
      input: "search",
      tools: [tool, { type: "web_search", external_web_access: false }],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(stubbed.lastSent("openai-responses").tools).toEqual([
      {
        type: "function",
        name: "look",
        description: "",
        parameters: { type: "object" },
        strict: true,
      },
      { type: "web_search", external_web_access: false },
    ]);
  });

  it("a hosted tool (Codex's web_search) is refused naming it at a provider that cannot run it; nothing is written", async () => {
    const subject = uniqueName("hosted");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const reply = await stubbed.post(
      "/responses",
      {
        model: "claude-f",
        input: "hi",
        tools: [tool, { type: "web_search", external_web_access: false }],
      },
      key,
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.where).toBe("body.tools[1]");
    expect(reply.body.error.message).toContain("web_search");
    expect(await stubbed.rowCount(subject)).toBe(0);
  });

  it("a named-function tool_choice is mapped per provider; a custom tool elsewhere is a function tool whose call comes back as custom_tool_call", async () => {
    const choice = { type: "function", name: "look" };
    for (const model of MODELS) {
      const reply = await stubbed.post("/responses", {
        model,
        input: "hi",
        tools: [tool],
        tool_choice: choice,
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    }
    expect(stubbed.lastSent("anthropic").tool_choice).toEqual({ type: "tool", name: "look" });
    expect(stubbed.lastSent("openai-responses").tool_choice).toEqual(choice);
    expect(stubbed.lastSent("gemini").toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["look"] },
    });
    expect(stubbed.lastSent("openrouter").tool_choice).toEqual({
      type: "function",
      function: { name: "look" },
    });

    stubbed.stubs.anthropic.script.push({
      toolCalls: [{ id: "toolu_patch", name: "apply_patch", arguments: "{}" }],
    });
    const custom = await stubbed.post("/responses", {
      model: "claude-f",
      input: "patch",
      tools: [{ type: "custom", name: "apply_patch", description: "patch" }],
    });
    expect(custom.status, JSON.stringify(custom.body)).toBe(200);
    expect(stubbed.lastSent("anthropic").tools[0]).toMatchObject({
      name: "apply_patch",
      input_schema: { type: "object", properties: {} },
    });
    expect(custom.body.output).toContainEqual(
      expect.objectContaining({ type: "custom_tool_call", name: "apply_patch", input: "{}" }),
    );
  });

  it("a function tool without a name is refused naming the name, not taken for a hosted tool", async () => {
    const reply = await stubbed.post("/responses", {
      model: "gpt-f",
      input: "hi",
      tools: [{ type: "function", parameters: { type: "object" } }],
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.where).toBe("body.tools[0].name");
  });

  it("a field the API does not have is refused naming it (not dropped)", async () => {
    const reply = await stubbed.post("/responses", {
      model: "claude-f",
      input: "hi",
      temprature: 1,
    });
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body.error)).toContain("temprature");
  });

  it("custom tools and Codex's namespace tools come back as custom_tool_call and namespaced function_call items", async () => {
    stubbed.stubs["openai-responses"].script.push({
      toolCalls: [{ id: "call_n", name: "multi_agent_v1__spawn", arguments: '{"task":"x"}' }],
    });
    const reply = await stubbed.post("/responses", {
      model: "gpt-f",
      input: "spawn",
      tools: [
        {
          type: "namespace",
          name: "multi_agent_v1",
          description: "agents",
          tools: [
            { type: "function", name: "spawn", parameters: { type: "object" }, strict: false },
          ],
        },
        { type: "custom", name: "apply_patch", description: "patch", format: { type: "text" } },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = stubbed.lastSent("openai-responses");
    expect(
      sent.tools.map((entry: { type: string; name: string }) => [entry.type, entry.name]),
    ).toEqual([
      ["function", "multi_agent_v1__spawn"],
      ["custom", "apply_patch"],
    ]);
    const call = reply.body.output.find((item: { type: string }) => item.type === "function_call");
    expect(call).toMatchObject({ name: "spawn", namespace: "multi_agent_v1", call_id: "call_n" });
  });
});
