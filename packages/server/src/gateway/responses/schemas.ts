import { z } from "zod";

/**
 * The Responses API shapes this server speaks: the subset of OpenAI's Responses API that a
 * stateful text-and-tools conversation needs, field for field, so the official clients work
 * unchanged (docs/server/responses.md lists what is taken and what is refused).
 */
const text = z.string();

export { inputItemSchema, inputTextPartSchema, type InputItem } from "./input-schemas.js";
import { inputItemSchema, inputTextPartSchema } from "./input-schemas.js";

export const functionToolSchema = z.object({
  type: z.literal("function"),
  name: z.string().min(1).max(128),
  description: z.string().max(8192).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

export const customToolSchema = z.object({
  type: z.literal("custom"),
  name: z.string().min(1).max(128),
  description: z.string().max(8192).nullish(),
  format: z.record(z.string(), z.unknown()).nullish(),
});

/** Codex's group of function tools under one name (`multi_agent_v1`). */
export const namespaceToolSchema = z.object({
  type: z.literal("namespace"),
  name: z.string().min(1).max(64),
  description: z.string().max(8192).nullish(),
  tools: z.array(z.union([functionToolSchema, customToolSchema])).max(128),
});

/** A tool the provider runs itself (web_search, file_search, …): refused where not run. */
export const hostedToolSchema = z.looseObject({
  type: z
    .string()
    .refine((type) => type !== "function" && type !== "custom" && type !== "namespace", {
      error: "a function, custom or namespace tool is not of this shape",
      // Aborts this branch, so the function, custom or namespace branch's own problem is reported.
      abort: true,
    }),
});

export const toolSchema = z.union([
  functionToolSchema,
  customToolSchema,
  namespaceToolSchema,
  hostedToolSchema,
]);
export type RequestTool = z.infer<typeof toolSchema>;

const textFormatSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    name: z.string().min(1).max(64),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);

export const metadataSchema = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, "metadata has at most 16 keys")
  .describe("Up to 16 string pairs (keys ≤ 64, values ≤ 512 characters); never a list of items.");

export const createResponseBodySchema = z
  .strictObject({
    model: z.string().min(1).max(200),
    input: z.union([z.string(), z.array(inputItemSchema).min(1).max(256)]),
    instructions: z.string().max(262_144).nullish(),
    tools: z.array(toolSchema).max(128).optional(),
    previous_response_id: z.string().min(1).max(200).nullish(),
    conversation: z
      .union([z.string().min(1).max(200), z.strictObject({ id: z.string().min(1).max(200) })])
      .nullish(),
    metadata: metadataSchema.nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_obfuscation: z.boolean().nullish() }).nullish(),
    max_output_tokens: z.int().min(1).max(1_000_000).nullish(),
    max_tool_calls: z.int().min(1).nullish(),
    store: z.boolean().nullish(),
    background: z.boolean().nullish(),
    tool_choice: z
      .union([
        z.enum(["none", "auto", "required"]),
        z.looseObject({ type: z.string(), name: z.string().optional() }),
      ])
      .nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    top_logprobs: z.int().min(0).max(20).nullish(),
    text: z
      .object({
        format: textFormatSchema.nullish(),
        verbosity: z.enum(["low", "medium", "high"]).nullish(),
      })
      .nullish(),
    reasoning: z
      .object({
        effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullish(),
        summary: z.enum(["auto", "concise", "detailed"]).nullish(),
        generate_summary: z.enum(["auto", "concise", "detailed"]).nullish(),
      })
      .nullish(),
    include: z.array(z.string()).nullish(),
    prompt: z.unknown().optional(),
    prompt_cache_key: z.string().max(1024).nullish(),
    prompt_cache_retention: z.string().nullish(),
    safety_identifier: z.string().max(256).nullish(),
    user: z.string().max(256).nullish(),
    service_tier: z.string().nullish(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
    context_management: z.unknown().optional(),
    client_metadata: z.record(z.string(), z.string()).nullish(),
  })
  .describe("POST /v1/responses: continue the context of previous_response_id with input.");
export type CreateResponseBody = z.infer<typeof createResponseBodySchema>;

/** A kept image given back: its bytes as a data URL (null where they were not read). */
const outputImagePartSchema = z.object({
  type: z.literal("input_image"),
  image_url: z.string().nullable(),
  detail: z.literal("auto"),
});

export const outputMessageItemSchema = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.string(),
  role: z.enum(["assistant", "user", "system", "developer"]),
  content: z.array(
    z.union([
      z.object({ type: z.literal("output_text"), text, annotations: z.array(z.unknown()) }),
      inputTextPartSchema,
      outputImagePartSchema,
    ]),
  ),
});

export const outputFunctionCallSchema = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  arguments: z.string(),
  status: z.string(),
});

export const outputCustomToolCallSchema = z.object({
  type: z.literal("custom_tool_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  status: z.string(),
});

export const outputFunctionCallOutputSchema = z.object({
  type: z.literal("function_call_output"),
  id: z.string(),
  call_id: z.string(),
  output: z.union([z.string(), z.array(z.union([inputTextPartSchema, outputImagePartSchema]))]),
  status: z.string(),
});

/**
 * A reasoning item the upstream (OpenAI Responses) returned, as received: its summary, and its
 * `encrypted_content` when the request's `include` asked for it. Given back in the answer to
 * the request only (never stored, A23); the client sends it back as input to continue.
 */
export const outputReasoningItemSchema = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.object({ type: z.string(), text })),
  encrypted_content: z.string().nullish(),
});

export const responseItemSchema = z.union([
  outputMessageItemSchema,
  outputReasoningItemSchema,
  outputFunctionCallSchema,
  outputCustomToolCallSchema,
  outputFunctionCallOutputSchema,
]);
export type ResponseItem = z.infer<typeof responseItemSchema>;

export const usageSchema = z.object({
  input_tokens: z.int(),
  input_tokens_details: z.object({ cached_tokens: z.int() }),
  output_tokens: z.int(),
  output_tokens_details: z.object({ reasoning_tokens: z.int() }),
  total_tokens: z.int(),
});

export const responseObjectSchema = z
  .object({
    id: z.string().describe("The stored output message's id; pass it as previous_response_id."),
    object: z.literal("response"),
    created_at: z.number(),
    status: z.enum(["completed", "failed", "in_progress", "incomplete", "cancelled"]),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.int().nullable(),
    model: z.string(),
    output: z.array(responseItemSchema),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.string().nullable(),
    store: z.boolean(),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    text: z.object({ format: textFormatSchema }).passthrough(),
    tool_choice: z.unknown(),
    tools: z.array(toolSchema),
    truncation: z.enum(["auto", "disabled"]),
    reasoning: z.unknown(),
    background: z.boolean(),
    prompt_cache_key: z.string().nullable(),
    safety_identifier: z.string().nullable(),
    user: z.string().nullable(),
    conversation: z.object({ id: z.string() }).nullable(),
    usage: usageSchema.nullable(),
    metadata: z.record(z.string(), z.string()),
    conversation_id: z.string().describe("verbatim: the stored conversation this response is in."),
  })
  .describe("A response, in the shape of OpenAI's Responses API.");
export type ResponseObject = z.infer<typeof responseObjectSchema>;
