import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import type { StoredMessage } from "./api.js";

/**
 * Which messages of a page the page size limit may have cut. The server cuts the longest
 * content strings of a page down to one common length and marks only the page
 * (`metadata.content_truncated`, docs/server/console.md "Page size"), so a string at that length (in
 * escaped UTF-8 bytes, as the server counts) may have been cut; shorter ones were not.
 */
const encoder = new TextEncoder();

function escapedLength(text: string): number {
  return encoder.encode(JSON.stringify(text)).length - 2;
}

function contentStrings(message: StoredMessage | ChatMLMessage): string[] {
  const strings: string[] = [];
  const record = message as unknown as Record<string, unknown>;
  const content = record["content"];
  if (typeof content === "string") strings.push(content);
  else if (Array.isArray(content)) {
    for (const part of content as Record<string, unknown>[]) {
      if (part["type"] === "text" && typeof part["text"] === "string") strings.push(part["text"]);
    }
  }
  const calls = record["tool_calls"];
  if (Array.isArray(calls)) {
    for (const call of calls as { function?: { arguments?: unknown } }[]) {
      if (typeof call.function?.arguments === "string") strings.push(call.function.arguments);
    }
  }
  return strings;
}

/** The messages of a cut page holding a string at the cut length (within one code point). */
export function possiblyCutMessages<M extends StoredMessage | ChatMLMessage>(
  messages: readonly M[],
): M[] {
  const longest = messages.map((message) =>
    Math.max(0, ...contentStrings(message).map(escapedLength)),
  );
  const level = Math.max(0, ...longest);
  if (level === 0) return [];
  return messages.filter((_, index) => (longest[index] ?? 0) >= level - 6);
}
