import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { Block } from "verbatim-llm/history";
import { blockSchema, isBlockList, roleSchema } from "verbatim-llm/internal";
import {
  FINAL_STATUSES,
  ROLE_OF_TYPE,
  TYPE_OF_ROLE,
  type RequestSettings,
} from "../conversations/message-types.js";
import { checkStoredText, parseOrThrow, type GatewayLimits } from "./checks.js";

/** Most tool definitions a response's settings keep (as the Responses API allows). */
export const MAX_REQUEST_TOOLS = 128;

/** Request settings as written and as read back (rows.ts). */
export const requestSettingsSchema = z.strictObject({
  instructions: z.string().nullable(),
  tools: z
    .array(z.record(z.string(), z.json()))
    .max(MAX_REQUEST_TOOLS, `at most ${MAX_REQUEST_TOOLS} tools`),
  maxOutputTokens: z.int().min(1).nullable(),
  echo: z.record(z.string(), z.json()).optional(),
});

/**
 * A response's request settings as stored JSON; refused when not of the closed shape, not
 * well-formed Unicode, or larger than a message's content may be.
 */
export function serializeRequestSettings(
  value: unknown,
  limits: GatewayLimits,
  where: string,
): string {
  // Every field alike (instructions, tool names, descriptions, parameters at any depth), and
  // before the schema, which would drop a __proto__ key of a tool's parameters.
  checkStoredText(value, where);
  const settings: RequestSettings = parseOrThrow(requestSettingsSchema, value, where);
  const text = JSON.stringify(settings);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > limits.maxContentBytes) {
    throw new VerbatimError(
      "gateway_content_too_large",
      `the request settings are ${bytes} bytes as JSON; at most ${limits.maxContentBytes} are stored per message`,
      { where, hint: "Send shorter instructions or fewer tools; nothing was written" },
    );
  }
  return text;
}

export const appendMessageSchema = z
  .strictObject({
    role: roleSchema,
    type: z.enum(["user", "assistant", "tool_result"]).optional(),
    content: z.array(blockSchema),
    status: z.enum(["in_progress", ...FINAL_STATUSES]).optional(),
    metadata: z.unknown().optional(),
    gateway: z.unknown().optional(),
    request: z.unknown().optional(),
  })
  .superRefine((value, context) => {
    if (value.type !== undefined && ROLE_OF_TYPE[value.type] !== value.role) {
      context.addIssue({
        code: "custom",
        path: ["type"],
        message: `a ${value.type} message has role "${ROLE_OF_TYPE[value.type]}", not "${value.role}"`,
      });
    }
  })
  .transform((value) => ({ ...value, type: value.type ?? TYPE_OF_ROLE[value.role] }));

export const finalStatusSchema = z.enum(FINAL_STATUSES);

const blockListSchema = z.array(blockSchema);

/**
 * A message's blocks as the store keeps them: a copy the caller cannot change afterwards (blocks
 * hold only strings and booleans, so copying each block copies all). Checked by the hand-written
 * check first; the zod schema runs only when that is unsure, and explains a fault.
 */
export function parseBlocks(value: unknown, where: string): Block[] {
  if (isBlockList(value)) return value.map((block) => ({ ...block }));
  return parseOrThrow(blockListSchema, value, where);
}

/** The content as stored JSON, refused when not well-formed Unicode or over the size limit. */
export function serializeContent(
  content: readonly Block[],
  role: "user" | "assistant" | "tool",
  limits: GatewayLimits,
  where: string,
): string {
  checkStoredText(content, where);
  const text = JSON.stringify(content);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > limits.maxContentBytes) {
    throw new VerbatimError(
      "gateway_content_too_large",
      `the content is ${bytes} bytes as JSON; at most ${limits.maxContentBytes} are stored per message`,
      { where, hint: "Compress the conversation or send less; nothing was written" },
    );
  }
  return text;
}
