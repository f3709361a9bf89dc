import { BASE64_PATTERN } from "../core/bytes.js";
import type { Block } from "./message.js";
import { MIME_TYPE_PATTERN, SHA256_HEX_PATTERN } from "./schema.js";

/**
 * A fast structural check of a block list, for content read back from storage: true only for
 * values `z.array(blockSchema)` (src/history/schema.ts) accepts unchanged (the same keys, types
 * and patterns, strict). False means "not sure": run the zod schema, which explains the fault
 * or accepts. Written out by hand because reading a long context checks thousands of blocks;
 * a property test holds it to the schema.
 */
export function isBlockList(value: unknown): value is Block[] {
  if (!Array.isArray(value)) return false;
  for (const block of value as unknown[]) {
    if (!isBlock(block)) return false;
  }
  return true;
}

const SHA256 = SHA256_HEX_PATTERN;
const MIME_TYPE = MIME_TYPE_PATTERN;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Own keys all among `allowed` (strict), counted. */
function keysWithin(value: Record<string, unknown>, allowed: ReadonlySet<string>): number {
  const keys = Object.keys(value);
  for (const key of keys) {
    if (!allowed.has(key)) return -1;
  }
  return keys.length;
}

const TEXT_KEYS: ReadonlySet<string> = new Set(["type", "text"]);
const IMAGE_KEYS: ReadonlySet<string> = new Set(["type", "sha256", "mimeType"]);
const IMAGE_OMITTED_KEYS: ReadonlySet<string> = new Set(["type", "mimeType"]);
const TOOL_CALL_KEYS: ReadonlySet<string> = new Set([
  "type",
  "id",
  "name",
  "arguments",
  "argumentsBase64",
]);
const TOOL_RESULT_KEYS: ReadonlySet<string> = new Set([
  "type",
  "callID",
  "toolName",
  "isError",
  "content",
  "contentBase64",
]);

/** Exactly one of two optional string keys, the second one base64. */
function oneOf(block: Record<string, unknown>, textKey: string, bytesKey: string): boolean {
  const text = block[textKey];
  const bytes = block[bytesKey];
  if (text !== undefined) return typeof text === "string" && !(bytesKey in block);
  return typeof bytes === "string" && BASE64_PATTERN.test(bytes) && !(textKey in block);
}

function isBlock(block: unknown): boolean {
  if (!isPlainObject(block)) return false;
  switch (block["type"]) {
    case "text":
      return keysWithin(block, TEXT_KEYS) === 2 && typeof block["text"] === "string";
    case "image":
      return (
        keysWithin(block, IMAGE_KEYS) === 3 &&
        typeof block["sha256"] === "string" &&
        SHA256.test(block["sha256"]) &&
        typeof block["mimeType"] === "string" &&
        MIME_TYPE.test(block["mimeType"])
      );
    case "imageOmitted":
      return (
        keysWithin(block, IMAGE_OMITTED_KEYS) === 2 &&
        typeof block["mimeType"] === "string" &&
        MIME_TYPE.test(block["mimeType"])
      );
    case "toolCall":
      return (
        keysWithin(block, TOOL_CALL_KEYS) === 4 &&
        typeof block["id"] === "string" &&
        typeof block["name"] === "string" &&
        oneOf(block, "arguments", "argumentsBase64")
      );
    case "toolResult":
      return (
        keysWithin(block, TOOL_RESULT_KEYS) === 5 &&
        typeof block["callID"] === "string" &&
        typeof block["toolName"] === "string" &&
        typeof block["isError"] === "boolean" &&
        oneOf(block, "content", "contentBase64")
      );
    default:
      return false;
  }
}
