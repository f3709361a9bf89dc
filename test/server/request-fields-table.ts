/**
 * The every-field table of the Responses create request (docs/server/responses.md, "Conformance: every
 * field of `POST /v1/responses`"): for each field of the request schema, the value sent and
 * what became of it at each wire format. responses-request-fields.test.ts sends every row;
 * conformance-table.test.ts holds docs/server/responses.md's table to it.
 */
import { expect } from "vitest";

export type Model = "claude-f" | "gpt-f" | "gemini-f" | "chat-f";
export const MODELS: readonly Model[] = ["claude-f", "gpt-f", "gemini-f", "chat-f"];
export const PROVIDER = {
  "claude-f": "anthropic",
  "gpt-f": "openai-responses",
  "gemini-f": "gemini",
  "chat-f": "openrouter",
} as const;

/** What became of the field at one provider. */
export type Outcome =
  | { readonly check: (sent: any, url: string) => void }
  | { readonly refused: true }
  | { readonly elsewhere: string };

export interface Row {
  readonly value: unknown;
  /** Added to the request with the field (a field about tools needs a tool). */
  readonly with?: Record<string, unknown>;
  readonly outcome: Readonly<Record<Model, Outcome>>;
}

export const tool = {
  type: "function",
  name: "look",
  parameters: { type: "object" },
  strict: true,
};
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

export const TABLE: Readonly<Record<string, Row>> = {
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
