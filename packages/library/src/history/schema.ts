import { z } from "zod";
import { BASE64_PATTERN, isWellFormedText } from "../core/bytes.js";
import type { Message, ToolCallBlock, ToolResultBlock } from "./message.js";
import { MIME_TYPE_PATTERN, SHA256_HEX_PATTERN } from "./patterns.js";

export { MIME_TYPE_PATTERN, SHA256_HEX_PATTERN };

/**
 * zod schemas of the message model, strict: an unknown key, an unknown block type or a value
 * of the wrong type is refused. Used wherever messages come in (archive files, HTTP bodies,
 * database rows).
 */
export const sha256HexSchema = z
  .string()
  .regex(SHA256_HEX_PATTERN, "expected 64 lowercase hex digits (SHA-256)");
export const mimeTypeSchema = z
  .string()
  .regex(MIME_TYPE_PATTERN, "expected a MIME type such as image/png");
const base64 = z.string().regex(BASE64_PATTERN, "expected standard base64 with padding");
const sha256Hex = sha256HexSchema;
const mimeType = mimeTypeSchema;

export const textBlockSchema = z.strictObject({ type: z.literal("text"), text: z.string() });
export const imageBlockSchema = z.strictObject({
  type: z.literal("image"),
  sha256: sha256Hex,
  mimeType,
});
export const imageOmittedBlockSchema = z.strictObject({
  type: z.literal("imageOmitted"),
  mimeType,
});
/**
 * Block schemas that require exactly one of two keys, with those keys: the JSON Schema
 * generator (src/format/json-schema.ts) writes the rule as `oneOf`.
 */
export const exactlyOneOfKeys = new WeakMap<z.ZodType, readonly [string, string]>();

/** Exactly one of `text` and `bytes` keys is present (A11: text, or base64 for non-UTF-8). */
function exactlyOne(textKey: string, bytesKey: string) {
  return (value: object, context: z.RefinementCtx): void => {
    const count = Number(textKey in value) + Number(bytesKey in value);
    if (count !== 1) {
      context.addIssue({
        code: "custom",
        message: `expected exactly one of "${textKey}" and "${bytesKey}", found ${count}`,
      });
    }
  };
}

export const toolCallBlockSchema = z
  .strictObject({
    type: z.literal("toolCall"),
    id: z.string(),
    name: z.string(),
    arguments: z.string().optional(),
    argumentsBase64: base64.optional(),
  })
  .superRefine(exactlyOne("arguments", "argumentsBase64"))
  .transform((value) => value as ToolCallBlock);
exactlyOneOfKeys.set(toolCallBlockSchema, ["arguments", "argumentsBase64"]);

export const toolResultBlockSchema = z
  .strictObject({
    type: z.literal("toolResult"),
    callID: z.string(),
    toolName: z.string(),
    isError: z.boolean(),
    content: z.string().optional(),
    contentBase64: base64.optional(),
  })
  .superRefine(exactlyOne("content", "contentBase64"))
  .transform((value) => value as ToolResultBlock);
exactlyOneOfKeys.set(toolResultBlockSchema, ["content", "contentBase64"]);

/** The zod schema of one history block. */
export const blockSchema = z.discriminatedUnion("type", [
  textBlockSchema,
  imageBlockSchema,
  imageOmittedBlockSchema,
  toolCallBlockSchema,
  toolResultBlockSchema,
]);

/** The zod schema of a history message's role. */
export const roleSchema = z.enum(["user", "assistant", "tool"]);

export const messageSchema = z.strictObject({
  role: roleSchema,
  content: z.array(blockSchema),
});

/** Compile-time check: what the schema accepts is a Message. */
export type MessageFromSchema = z.output<typeof messageSchema>;
const schemaOutputIsMessage: (value: MessageFromSchema) => Message = (value) => value;
void schemaOutputIsMessage;

/** True when every string in a message can be written as UTF-8 exactly (no lone surrogate). */
export function messageIsWellFormed(message: Message): boolean {
  for (const block of message.content) {
    for (const value of Object.values(block)) {
      if (typeof value === "string" && !isWellFormedText(value)) return false;
    }
  }
  return true;
}
