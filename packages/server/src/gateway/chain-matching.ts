import { createHash } from "node:crypto";

/**
 * The hashes a recorded call's messages are matched on (docs/server.md, "Recorded calls"). A
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
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => key !== "cache_control" && record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
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
  return createHash("sha256")
    .update(canonicalJson(normaliseMessage(message)))
    .digest("hex");
}

/**
 * The prefix hash of every position: entry i names messages 0..i. Each is the hash of the
 * previous prefix hash and the message's own hash, so one lookup of these values finds the
 * longest stored prefix, whatever the branch. The wire format is the seed: a Messages chain
 * and a Chat chain with the same messages are not one chain.
 */
export function prefixHashes(seed: string, messages: readonly unknown[]): string[] {
  const out: string[] = [];
  let previous = createHash("sha256").update(`verbatim-chain:${seed}`).digest("hex");
  for (const message of messages) {
    previous = createHash("sha256")
      .update(previous)
      .update(":")
      .update(messageHash(message))
      .digest("hex");
    out.push(previous);
  }
  return out;
}
