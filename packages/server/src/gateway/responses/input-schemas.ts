import { z } from "zod";

/**
 * The input items of POST /v1/responses, as OpenAI's Responses API and its clients send them
 * (the `openai` SDK, the Agents SDK, the AI SDK, Codex): messages of the four roles with text,
 * refusal and image parts, function and custom tool calls and their outputs (a string or
 * content parts), references to stored items, and reasoning items given back. What each
 * becomes is in input.ts; docs/server/responses.md has the conformance table.
 */
const text = z.string();

export const inputTextPartSchema = z.strictObject({ type: z.literal("input_text"), text });
export const outputTextPartSchema = z.object({
  type: z.literal("output_text"),
  text,
  annotations: z.array(z.unknown()).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
export const refusalPartSchema = z.object({ type: z.literal("refusal"), refusal: text });
export const inputImagePartSchema = z.object({
  type: z.literal("input_image"),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(["low", "high", "auto", "original"]).nullish(),
});
export const inputFilePartSchema = z.object({
  type: z.literal("input_file"),
  file_id: z.string().nullish(),
  file_data: z.string().nullish(),
  file_url: z.string().nullish(),
  filename: z.string().nullish(),
});

const contentPartSchema = z.discriminatedUnion("type", [
  inputTextPartSchema,
  outputTextPartSchema,
  refusalPartSchema,
  inputImagePartSchema,
  inputFilePartSchema,
]);
export type ContentPart = z.infer<typeof contentPartSchema>;

export const inputMessageSchema = z.object({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"], {
    error: 'a message\'s role is "user", "assistant", "system" or "developer"',
  }),
  content: z.union([text, z.array(contentPartSchema).min(1)]),
  id: z.string().optional(),
  status: z.string().optional(),
  phase: z.string().nullish(),
});

export const functionCallItemSchema = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string(),
  namespace: z.string().nullish(),
  id: z.string().optional(),
  status: z.string().optional(),
});

/** A tool's output: a string, or content parts (text, images, files). */
const toolOutputSchema = z.union([
  z.string(),
  z.array(
    z.discriminatedUnion("type", [inputTextPartSchema, inputImagePartSchema, inputFilePartSchema]),
  ),
]);

export const functionCallOutputItemSchema = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(200),
  output: toolOutputSchema,
  id: z.string().nullish(),
  status: z.string().nullish(),
});

export const customToolCallItemSchema = z.object({
  type: z.literal("custom_tool_call"),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  input: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const customToolCallOutputItemSchema = z.object({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string().min(1).max(200),
  output: toolOutputSchema,
  id: z.string().nullish(),
});

export const itemReferenceSchema = z.object({
  type: z.literal("item_reference"),
  id: z.string().min(1).max(200),
});

export const reasoningItemSchema = z.object({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.object({ type: z.string(), text })).optional(),
  content: z.array(z.object({ type: z.string(), text })).nullish(),
  encrypted_content: z.string().nullish(),
  status: z.string().nullish(),
});

export const inputItemSchema = z.union([
  inputMessageSchema,
  functionCallItemSchema,
  functionCallOutputItemSchema,
  customToolCallItemSchema,
  customToolCallOutputItemSchema,
  itemReferenceSchema,
  reasoningItemSchema,
]);
export type InputItem = z.infer<typeof inputItemSchema>;
export type InputMessageItem = z.infer<typeof inputMessageSchema>;
