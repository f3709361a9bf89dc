import * as crypto from "node:crypto";
import { toolCallArgumentText, toolResultText, type Block } from "verbatim-llm/history";

/** SHA-256 in hex: the one-shot `crypto.hash` where Node has it (no Hash object per call). */
export const sha256: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) =>
        (crypto as unknown as { hash: (a: string, d: string) => string }).hash("sha256", text)
    : (text) => crypto.createHash("sha256").update(text).digest("hex");

/**
 * The hashes a recorded call's messages are matched on (docs/server/recorded-calls.md, "Recorded calls"). A
 * message is normalised before it is hashed, so what a client changes between calls without
 * changing what the model reads does not fork its chain:
 * - `cache_control` keys are left out at every depth (clients move the cache marker to the
 *   last message on every call);
 * - content given as one string is the same as one text block with that text;
 * - object keys are sorted (key order is not meaning).
 * Everything else counts: a message whose text, role, tool call or any other field differs
 * is another message.
 */

/** JSON with sorted keys and no `cache_control`: the text a message is hashed on. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let text = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ",";
      text += canonicalJson(value[index]);
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // Most clients write keys in one order already; sort only when they are not sorted.
  for (let index = 1; index < keys.length; index++) {
    if ((keys[index - 1] as string) > (keys[index] as string)) {
      keys.sort();
      break;
    }
  }
  let text = "{";
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (key === "cache_control" || member === undefined) continue;
    if (!first) text += ",";
    first = false;
    text += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}

/** A message with string content written as one text block. */
export function normaliseMessage(message: unknown): unknown {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return message;
  const record = message as Record<string, unknown>;
  const content = record["content"];
  if (typeof content !== "string") return record;
  return { ...record, content: [{ type: "text", text: content }] };
}

/** SHA-256 (hex) of one normalised message. */
export function messageHash(message: unknown): string {
  return sha256(canonicalJson(normaliseMessage(message)));
}

/**
 * The prefix hash of every position: entry i names messages 0..i. Each is the hash of the
 * previous prefix hash and the message's normalised text, so one lookup of these values finds
 * the longest stored prefix, whatever the branch. The wire format is the seed: a Messages chain
 * and a Chat chain with the same messages are not one chain.
 */
export function prefixHashes(seed: string, messages: readonly unknown[]): string[] {
  const out: string[] = [];
  let previous = sha256(`verbatim-chain:${seed}`);
  for (const message of messages) {
    previous = sha256(`${previous}\n${canonicalJson(normaliseMessage(message))}`);
    out.push(previous);
  }
  return out;
}

/** The seed of the Responses API's chains (/v1/responses without previous_response_id). */
export const RESPONSES_CHAIN_SEED = "openai-responses";

/** A message as the Responses matching sees it: a stored gateway message or a request's input. */
export interface MatchableMessage {
  readonly role: "user" | "assistant" | "tool" | "system";
  readonly content: readonly Block[];
  /** A `system` or `developer` input message (stored as a user message marked so). */
  readonly inputRole?: "system" | "developer" | undefined;
}

/**
 * The matching units of a message, as the Responses API's items (docs/server/recorded-calls.md, "Matching"):
 * a message item for its text (all text blocks joined, as the item gives them back) and the
 * SHA-256 of its images, then one
 * item per tool call and one per tool result. So a stored answer `[text, call, call]` and the
 * items a client gives back for it (a `message`, then two `function_call`s, each its own input
 * message) are the same units; a message with no text and no calls has none (an empty answer).
 * Each unit is the text it is hashed on.
 */
export function responseUnits(message: MatchableMessage): string[] {
  const units: string[] = [];
  let text = "";
  let hasText = false;
  const images: string[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      text += block.text;
      hasText = true;
    } else if (block.type === "image") {
      images.push(block.sha256);
    }
  }
  const role =
    message.role === "assistant" || message.role === "tool"
      ? message.role
      : (message.inputRole ?? message.role);
  if (hasText || images.length > 0) units.push(JSON.stringify(["message", role, text, ...images]));
  for (const block of message.content) {
    if (block.type === "toolCall") {
      units.push(JSON.stringify(["call", block.id, block.name, toolCallArgumentText(block)]));
    } else if (block.type === "toolResult") {
      units.push(JSON.stringify(["result", block.callID, toolResultText(block)]));
    }
  }
  return units;
}

/** Prefix hashes over unit texts (as `prefixHashes`), continuing from `previous` when given. */
export function unitPrefixHashes(
  seed: string,
  units: readonly string[],
  previous: string | null = null,
): string[] {
  const out: string[] = [];
  let hash = previous ?? sha256(`verbatim-chain:${seed}`);
  for (const unit of units) {
    hash = sha256(`${hash}\n${unit}`);
    out.push(hash);
  }
  return out;
}

/** SHA-256 (hex) of one unit's text. */
export function unitHash(unit: string): string {
  return sha256(unit);
}
