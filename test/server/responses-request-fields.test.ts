/**
 * No field of the Responses request is dropped silently (issue 17): every field of the request
 * schema is sent, one at a time, to each of the four wire formats, and it reached the upstream
 * as it is, was mapped to the provider's own field, had a documented no-effect, or was refused
 * with a 400 naming it (and nothing written). The table below is docs/server.md's conformance
 * table; a field added to the schema without a row here fails the first test. The upstreams
 * are stub models: local servers speaking each provider's wire format, not the providers.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createResponseBodySchema } from "../../packages/server/src/server/responses/schemas.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

type Model = "claude-f" | "gpt-f" | "gemini-f" | "chat-f";
const MODELS: readonly Model[] = ["claude-f", "gpt-f", "gemini-f", "chat-f"];
const PROVIDER = {
  "claude-f": "anthropic",
  "gpt-f": "openai-responses",
  "gemini-f": "gemini",
  "chat-f": "openrouter",
} as const;

/** What became of the field at one provider. */
type Outcome =
  | { readonly check: (sent: any, url: string) => void }
  | { readonly refused: true }
  | { readonly elsewhere: string };

interface Row {
  readonly value: unknown;
  /** Added to the request with the field (a field about tools needs a tool). */
  readonly with?: Record<string, unknown>;
  readonly outcome: Readonly<Record<Model, Outcome>>;
}

const tool = { type: "function", name: "look", parameters: { type: "object" }, strict: true };
const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
const every = (outcome: Outcome): Record<Model, Outcome> => ({
  "claude-f": outcome,
  "gpt-f": outcome,
  "gemini-f": outcome,
  "chat-f": outcome,
});
const check = (assert: (sent: any, url: string) => void): Outcome => ({ check: assert });
const refused: Outcome = { refused: true };
const noEffect = (why: string): Outcome => ({ check: (sent) => expect(sent, why).toBeDefined() });
const notContaining = (text: string): Outcome => ({
  check: (sent) => expect(JSON.stringify(sent)).not.toContain(text),
});

const TABLE: Readonly<Record<string, Row>> = {
  model: {
    value: undefined,
    // Gemini names the model in the URL.
    outcome: every(check((sent, url) => expect(JSON.stringify(sent) + url).toContain("-f"))),
  },
  input: {
    value: "the input",
    outcome: every(check((sent) => expect(JSON.stringify(sent)).toContain("the input"))),
  },
  instructions: {
    value: "Rule one.",
    outcome: {
      "claude-f": check((sent) => expect(sent.system).toBe("Rule one.")),
      "gpt-f": check((sent) => expect(sent.instructions).toBe("Rule one.")),
      "gemini-f": check((sent) => expect(sent.systemInstruction.parts[0].text).toBe("Rule one.")),
      "chat-f": check((sent) => expect(sent.messages[0]).toMatchObject({ role: "system" })),
    },
  },
  tools: {
    value: [tool],
    outcome: {
      "claude-f": check((sent) =>
        expect(sent.tools[0]).toMatchObject({ name: "look", strict: true }),
      ),
      "gpt-f": check((sent) => expect(sent.tools[0]).toMatchObject({ name: "look", strict: true })),
      "gemini-f": check((sent) => expect(JSON.stringify(sent.tools)).toContain('"look"')),
      "chat-f": check((sent) =>
        expect(sent.tools[0].function).toMatchObject({ name: "look", strict: true }),
      ),
    },
  },
  previous_response_id: {
    value: undefined,
    outcome: every({ elsewhere: "responses-openai-client" }),
  },
  conversation: { value: undefined, outcome: every({ elsewhere: "responses-state below" }) },
  store: { value: undefined, outcome: every({ elsewhere: "responses-state below" }) },
  stream: { value: undefined, outcome: every({ elsewhere: "responses-openai-client (streams)" }) },
  metadata: { value: { ticket: "T-9" }, outcome: every(notContaining("T-9")) },
  stream_options: {
    value: { include_obfuscation: false },
    outcome: every(noEffect("no obfuscation is sent")),
  },
  max_output_tokens: {
    value: 77,
    outcome: {
      "claude-f": check((sent) => expect(sent.max_tokens).toBe(77)),
      "gpt-f": check((sent) => expect(sent.max_output_tokens).toBe(77)),
      "gemini-f": check((sent) => expect(sent.generationConfig.maxOutputTokens).toBe(77)),
      "chat-f": check((sent) => expect(sent.max_tokens).toBe(77)),
    },
  },
  max_tool_calls: {
    value: 3,
    outcome: { ...every(refused), "gpt-f": check((sent) => expect(sent.max_tool_calls).toBe(3)) },
  },
  background: { value: undefined, outcome: every({ elsewhere: "responses-state" }) },
  tool_choice: {
    value: "required",
    with: { tools: [tool] },
    outcome: {
      "claude-f": check((sent) => expect(sent.tool_choice).toEqual({ type: "any" })),
      "gpt-f": check((sent) => expect(sent.tool_choice).toBe("required")),
      "gemini-f": check((sent) => expect(sent.toolConfig.functionCallingConfig.mode).toBe("ANY")),
      "chat-f": check((sent) => expect(sent.tool_choice).toBe("required")),
    },
  },
  parallel_tool_calls: {
    value: false,
    with: { tools: [tool] },
    outcome: {
      "claude-f": check((sent) =>
        expect(sent.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true }),
      ),
      "gpt-f": check((sent) => expect(sent.parallel_tool_calls).toBe(false)),
      "gemini-f": refused,
      "chat-f": check((sent) => expect(sent.parallel_tool_calls).toBe(false)),
    },
  },
  temperature: {
    value: 0.5,
    outcome: {
      "claude-f": check((sent) => expect(sent.temperature).toBe(0.5)),
      "gpt-f": check((sent) => expect(sent.temperature).toBe(0.5)),
      "gemini-f": check((sent) => expect(sent.generationConfig.temperature).toBe(0.5)),
      "chat-f": check((sent) => expect(sent.temperature).toBe(0.5)),
    },
  },
  top_p: {
    value: 0.9,
    outcome: {
      "claude-f": check((sent) => expect(sent.top_p).toBe(0.9)),
      "gpt-f": check((sent) => expect(sent.top_p).toBe(0.9)),
      "gemini-f": check((sent) => expect(sent.generationConfig.topP).toBe(0.9)),
      "chat-f": check((sent) => expect(sent.top_p).toBe(0.9)),
    },
  },
  top_logprobs: {
    value: 2,
    outcome: {
      "claude-f": refused,
      "gpt-f": check((sent) => expect(sent.top_logprobs).toBe(2)),
      "gemini-f": refused,
      "chat-f": check((sent) => expect([sent.logprobs, sent.top_logprobs]).toEqual([true, 2])),
    },
  },
  text: {
    value: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    outcome: {
      "claude-f": check((sent) =>
        expect(sent.output_config).toEqual({ format: { type: "json_schema", schema } }),
      ),
      "gpt-f": check((sent) => expect(sent.text.format).toMatchObject({ name: "answer", schema })),
      "gemini-f": check((sent) =>
        expect(sent.generationConfig).toMatchObject({
          responseMimeType: "application/json",
          responseJsonSchema: schema,
        }),
      ),
      "chat-f": check((sent) =>
        expect(sent.response_format).toEqual({
          type: "json_schema",
          json_schema: { name: "answer", schema, strict: true },
        }),
      ),
    },
  },
  reasoning: {
    value: { effort: "low", summary: "auto" },
    outcome: {
      "claude-f": check((sent) => expect(sent.output_config).toEqual({ effort: "low" })),
      "gpt-f": check((sent) => expect(sent.reasoning).toEqual({ effort: "low", summary: "auto" })),
      "gemini-f": check((sent) =>
        expect(sent.generationConfig.thinkingConfig).toEqual({ thinkingLevel: "low" }),
      ),
      "chat-f": check((sent) => expect(sent.reasoning).toEqual({ effort: "low" })),
    },
  },
  include: {
    value: ["reasoning.encrypted_content"],
    outcome: {
      ...every(noEffect("reasoning is kept within a turn by the server (A23)")),
      "gpt-f": check((sent) => expect(sent.include).toEqual(["reasoning.encrypted_content"])),
    },
  },
  prompt: { value: { id: "pmpt_1" }, outcome: every(refused) },
  prompt_cache_key: {
    value: "cache-key-1",
    outcome: {
      "claude-f": notContaining("cache-key-1"),
      "gpt-f": check((sent) => expect(sent.prompt_cache_key).toBe("cache-key-1")),
      "gemini-f": notContaining("cache-key-1"),
      "chat-f": notContaining("cache-key-1"),
    },
  },
  prompt_cache_retention: {
    value: "24h",
    outcome: {
      "claude-f": refused,
      "gpt-f": check((sent) => expect(sent.prompt_cache_retention).toBe("24h")),
      "gemini-f": refused,
      "chat-f": check((sent) => expect(sent.prompt_cache_retention).toBe("24h")),
    },
  },
  safety_identifier: {
    value: "person-1",
    outcome: {
      "claude-f": check((sent) => expect(sent.metadata).toEqual({ user_id: "person-1" })),
      "gpt-f": check((sent) => expect(sent.safety_identifier).toBe("person-1")),
      "gemini-f": notContaining("person-1"),
      "chat-f": check((sent) => expect(sent.safety_identifier).toBe("person-1")),
    },
  },
  user: {
    value: "person-2",
    outcome: {
      "claude-f": check((sent) => expect(sent.metadata).toEqual({ user_id: "person-2" })),
      "gpt-f": check((sent) => expect(sent.user).toBe("person-2")),
      "gemini-f": notContaining("person-2"),
      "chat-f": check((sent) => expect(sent.user).toBe("person-2")),
    },
  },
  service_tier: {
    value: "flex",
    outcome: {
      "claude-f": refused,
      "gpt-f": check((sent) => expect(sent.service_tier).toBe("flex")),
      "gemini-f": refused,
      "chat-f": check((sent) => expect(sent.service_tier).toBe("flex")),
    },
  },
  truncation: {
    value: "auto",
    outcome: { ...every(refused), "gpt-f": check((sent) => expect(sent.truncation).toBe("auto")) },
  },
  context_management: { value: [{ type: "compaction" }], outcome: every(refused) },
  client_metadata: { value: { session_id: "s-1" }, outcome: every(notContaining("s-1")) },
};

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
    let stored = 0;
    for (const [field, row] of Object.entries(TABLE)) {
      for (const model of MODELS) {
        const outcome = row.outcome[model];
        if ("elsewhere" in outcome) continue;
        const provider = PROVIDER[model];
        const before = stubbed.stubs[provider].requests.length;
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
          expect(await stubbed.rowCount(subject), label).toBe(stored);
          continue;
        }
        expect(reply.status, label).toBe(200);
        stored += 2;
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
