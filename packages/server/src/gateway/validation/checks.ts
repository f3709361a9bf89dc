import { z } from "zod";
import { type ErrorCode, VerbatimError } from "verbatim-llm/core";
import {
  STORED_TEXT_HINT,
  describeStoredTextFault,
  findStoredTextFault,
  isStorableText,
  storedTextFaultWhere,
  type StoredTextFault,
} from "verbatim-llm/internal";

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
