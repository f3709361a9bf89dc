import { z } from "zod";
import {
  type ErrorCode,
  VerbatimError,
  describeStoredTextFault,
  findStoredTextFault,
  isStorableText,
  STORED_TEXT_HINT,
  storedTextFaultWhere,
  type StoredTextFault,
} from "verbatim-llm/core";
import { isBlockList, blockSchema, roleSchema, type Block } from "verbatim-llm/history";
import {
  FINAL_STATUSES,
  ROLE_OF_TYPE,
  TYPE_OF_ROLE,
  type CallerMetadata,
  type GatewayFacts,
  type RequestSettings,
} from "./message-types.js";

/** Bounds of caller metadata, as in the Responses API: a few short string pairs (B5). */
export const CALLER_METADATA_MAX_KEYS = 16;
export const CALLER_METADATA_MAX_KEY_LENGTH = 64;
export const CALLER_METADATA_MAX_VALUE_LENGTH = 512;
export const ID_MAX_LENGTH = 200;
/** Image URLs noted in one message's gateway facts (`imageUrls`), and the longest noted. */
export const NOTED_IMAGE_URLS_MAX = 64;
export const NOTED_IMAGE_URL_MAX_LENGTH = 4096;

/** Limits of one store; the defaults are in docs/store.md. */
export interface GatewayLimits {
  /** Most bytes of one message's content as stored JSON (default 4 MiB). */
  readonly maxContentBytes: number;
  /** Most messages one write appends (default 256). */
  readonly maxMessagesPerWrite: number;
}

export const DEFAULT_GATEWAY_LIMITS: GatewayLimits = {
  maxContentBytes: 4 * 1024 * 1024,
  maxMessagesPerWrite: 256,
};

export function formatIssuePath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/** A zod failure as one clear error: the first problem's path and message, and how many more. */
export function invalidInput(
  where: string,
  error: z.ZodError,
  code: "gateway_input_invalid" | "gateway_metadata_invalid" = "gateway_input_invalid",
): VerbatimError {
  const first = error.issues[0];
  const path = [where, formatIssuePath(first?.path ?? [])].filter((part) => part !== "").join(".");
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problems)` : "";
  return new VerbatimError(code, `${first?.message ?? "invalid"}${more}`, {
    where: path.replace(/\.\[/g, "["),
    hint: "Send the field as docs/store.md describes; nothing was written",
  });
}

/** The refusal of a value that breaks the stored-text rule (src/core/stored-text.ts). */
export function storedTextError(
  fault: StoredTextFault,
  where: string,
  code: ErrorCode = "gateway_input_invalid",
): VerbatimError {
  return new VerbatimError(code, describeStoredTextFault(fault), {
    where: storedTextFaultWhere(where, fault),
    hint: STORED_TEXT_HINT,
  });
}

/**
 * Refuses `value` (a string or any JSON value, keys included) when a string of it breaks the
 * stored-text rule: the one check every stored string of the gateway and of jobs goes through.
 */
export function checkStoredText(
  value: unknown,
  where: string,
  code: ErrorCode = "gateway_input_invalid",
): void {
  const fault = findStoredTextFault(value);
  if (fault !== undefined) throw storedTextError(fault, where, code);
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string) {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(where, result.error);
  return result.data as z.output<S>;
}

export const idSchema = z
  .string()
  .min(1, "expected a non-empty id")
  .max(ID_MAX_LENGTH, `an id has at most ${ID_MAX_LENGTH} characters`);

export const subjectSchema = idSchema.refine(
  isStorableText,
  "expected well-formed Unicode without U+0000 (NUL)",
);

export const idempotencyKeySchema = z
  .string()
  .min(1, "an idempotency key is not empty")
  .max(ID_MAX_LENGTH, `an idempotency key has at most ${ID_MAX_LENGTH} characters`)
  .regex(/^[\x21-\x7e]+$/, "an idempotency key holds printable ASCII characters only");

const shortText = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .refine(isStorableText, "not well-formed Unicode, or holds U+0000 (NUL)");
const count = z.int().min(0);

const usageSchema = z.strictObject({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  webSearchRequests: count,
  cacheWrite1h: count.optional(),
  reportedCost: z.number().min(0).optional(),
});

const gatewayFactsShape = {
  model: shortText(200).optional(),
  provider: shortText(100).optional(),
  providerResponseId: shortText(256).optional(),
  usage: usageSchema.optional(),
  stopReason: shortText(64).optional(),
  error: z.strictObject({ code: shortText(100), message: shortText(4000) }).optional(),
  inputRole: z.enum(["system", "developer"]).optional(),
  imageUrls: z
    .record(z.string().regex(/^\d{1,6}$/, "a block index"), shortText(NOTED_IMAGE_URL_MAX_LENGTH))
    .refine(
      (urls) => Object.keys(urls).length <= NOTED_IMAGE_URLS_MAX,
      `at most ${NOTED_IMAGE_URLS_MAX} image URLs`,
    )
    .optional(),
};

/**
 * Gateway-owned facts as a caller of the gateway passes them: a closed set of scalar fields, so
 * no list of items and no raw provider body can hide in it (B5).
 */
export const gatewayFactsSchema = z
  .strictObject(gatewayFactsShape)
  .transform((value) => value as GatewayFacts);

/** Gateway facts as stored: the above, plus how a summary came to be (set by compression). */
export const storedGatewayFactsSchema = z
  .strictObject({
    ...gatewayFactsShape,
    compression: z
      .strictObject({
        throughMessageId: z.string(),
        fromMessageId: z.string(),
        messageCount: z.int().min(0),
        source: z.enum(["caller", "model"]),
      })
      .optional(),
  })
  .transform((value) => value as GatewayFacts);

/** Gateway facts, refused with `gateway_metadata_invalid` when not of the closed shape. */
export function parseGatewayFacts(value: unknown, where: string): GatewayFacts {
  if (value === undefined) return {};
  checkStoredText(value, where, "gateway_metadata_invalid");
  const result = gatewayFactsSchema.safeParse(value);
  if (!result.success) throw invalidInput(where, result.error, "gateway_metadata_invalid");
  return result.data;
}

/**
 * Caller metadata: at most 16 string pairs, keys up to 64 characters, values up to 512 (B5).
 * A list or an object as a value is refused with its key named.
 */
export function checkCallerMetadata(value: unknown, where: string): CallerMetadata {
  const refuse = (message: string, at = where) =>
    new VerbatimError("gateway_metadata_invalid", message, {
      where: at,
      hint:
        `Metadata is at most ${CALLER_METADATA_MAX_KEYS} string pairs (keys up to ` +
        `${CALLER_METADATA_MAX_KEY_LENGTH} characters, values up to ` +
        `${CALLER_METADATA_MAX_VALUE_LENGTH}); messages go in the messages, never in metadata`,
    });
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw refuse(`metadata must be an object of string pairs, got ${describeType(value)}`);
  }
  const keys = Object.keys(value);
  if (keys.length > CALLER_METADATA_MAX_KEYS) {
    throw refuse(`metadata has ${keys.length} keys; at most ${CALLER_METADATA_MAX_KEYS} are kept`);
  }
  const result: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    const at = `${where}.${key.length > 70 ? `${key.slice(0, 64)}…` : key}`;
    if (key.length === 0 || key.length > CALLER_METADATA_MAX_KEY_LENGTH) {
      throw refuse(`a metadata key has 1 to ${CALLER_METADATA_MAX_KEY_LENGTH} characters`, at);
    }
    if (typeof item !== "string") {
      throw refuse(
        Array.isArray(item)
          ? "metadata values are strings; a list (of items or anything else) is refused"
          : `metadata values are strings, got ${describeType(item)}`,
        at,
      );
    }
    if (item.length > CALLER_METADATA_MAX_VALUE_LENGTH) {
      throw refuse(
        `a metadata value has at most ${CALLER_METADATA_MAX_VALUE_LENGTH} characters, got ${item.length}`,
        at,
      );
    }
    const fault = findStoredTextFault({ [key]: item });
    if (fault !== undefined) throw storedTextError(fault, where, "gateway_metadata_invalid");
    result[key] = item;
  }
  return { ...result };
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

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
