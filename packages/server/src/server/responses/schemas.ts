import { z } from "zod";

/**
 * The Responses API shapes this server speaks: the subset of OpenAI's Responses API that a
 * stateful text-and-tools conversation needs, field for field, so the official clients work
 * unchanged (docs/server.md lists what is taken and what is refused).
 */
const text = z.string();

export const inputTextPartSchema = z.strictObject({ type: z.literal("input_text"), text });
export const outputTextPartSchema = z.object({
  type: z.literal("output_text"),
  text,
  annotations: z.array(z.unknown()).optional(),
});

export const inputMessageSchema = z.object({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant"], {
    error:
      'a message\'s role is "user" or "assistant"; send system or developer text as instructions',
  }),
  content: z.union([
    text,
    z.array(z.discriminatedUnion("type", [inputTextPartSchema, outputTextPartSchema])).min(1),
  ]),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const functionCallItemSchema = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const functionCallOutputItemSchema = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(200),
  output: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const inputItemSchema = z.union([
  inputMessageSchema,
  functionCallItemSchema,
  functionCallOutputItemSchema,
]);
export type InputItem = z.infer<typeof inputItemSchema>;

export const functionToolSchema = z.object({
  type: z.literal("function"),
  name: z.string().min(1).max(128),
  description: z.string().max(8192).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

export const metadataSchema = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, "metadata has at most 16 keys")
  .describe("Up to 16 string pairs (keys ≤ 64, values ≤ 512 characters); never a list of items.");

export const createResponseBodySchema = z
  .object({
    model: z.string().min(1).max(200),
    input: z.union([z.string(), z.array(inputItemSchema).min(1).max(256)]),
    instructions: z.string().max(262_144).nullish(),
    tools: z.array(functionToolSchema).max(128).optional(),
    previous_response_id: z.string().min(1).max(200).nullish(),
    metadata: metadataSchema.nullish(),
    stream: z.boolean().nullish(),
    max_output_tokens: z.int().min(1).max(1_000_000).nullish(),
    store: z.boolean().nullish(),
    tool_choice: z.unknown().optional(),
    parallel_tool_calls: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    user: z.string().max(256).optional(),
  })
  .describe("POST /v1/responses: continue the context of previous_response_id with input.");
export type CreateResponseBody = z.infer<typeof createResponseBodySchema>;

export const outputMessageItemSchema = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.string(),
  role: z.enum(["assistant", "user"]),
  content: z.array(
    z.union([
      z.object({ type: z.literal("output_text"), text, annotations: z.array(z.unknown()) }),
      inputTextPartSchema,
    ]),
  ),
});

export const outputFunctionCallSchema = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status: z.string(),
});

export const outputFunctionCallOutputSchema = z.object({
  type: z.literal("function_call_output"),
  id: z.string(),
  call_id: z.string(),
  output: z.string(),
  status: z.string(),
});

export const responseItemSchema = z.union([
  outputMessageItemSchema,
  outputFunctionCallSchema,
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
    text: z.object({ format: z.object({ type: z.literal("text") }) }),
    tool_choice: z.unknown(),
    tools: z.array(functionToolSchema),
    truncation: z.literal("disabled"),
    usage: usageSchema.nullable(),
    metadata: z.record(z.string(), z.string()),
    conversation_id: z.string().describe("verbatim: the stored conversation this response is in."),
  })
  .describe("A response, in the shape of OpenAI's Responses API.");
export type ResponseObject = z.infer<typeof responseObjectSchema>;

export const inputItemListSchema = z.object({
  object: z.literal("list"),
  data: z.array(responseItemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

export const inputItemsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().optional(),
  before: z.string().optional(),
});

export const responseIdParamsSchema = z.object({ id: z.string().min(1).max(200) });
