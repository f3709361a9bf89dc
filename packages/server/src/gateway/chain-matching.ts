import * as crypto from "node:crypto";

/** SHA-256 in hex: the one-shot `crypto.hash` where Node has it (no Hash object per call). */
const sha256: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) =>
        (crypto as unknown as { hash: (a: string, d: string) => string }).hash("sha256", text)
    : (text) => crypto.createHash("sha256").update(text).digest("hex");

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
