import { VerbatimError } from "verbatim-llm/core";
import { findStoredTextFault } from "verbatim-llm/internal";
import type { CallerMetadata } from "../conversations/message-types.js";
import {
  CALLER_METADATA_MAX_KEYS,
  CALLER_METADATA_MAX_KEY_LENGTH,
  CALLER_METADATA_MAX_VALUE_LENGTH,
  storedTextError,
} from "./checks.js";

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
