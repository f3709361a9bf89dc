import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { ImportedConversation } from "../../packages/library/src/interop/index.js";

/** The interop corpus (test/fixtures/interop, SOURCES.md says where each file comes from). */
export const fixturesRoot = new URL("../fixtures/interop/", import.meta.url).pathname;

/** Every file under a folder of the corpus whose name ends with `suffix`, sorted. */
export function fixtureFiles(folder: string, suffix: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(suffix)) found.push(full);
    }
  };
  walk(join(fixturesRoot, folder));
  return found.sort();
}

export function shortName(file: string): string {
  return relative(fixturesRoot, file);
}

/** The non-blank lines of a file parsed as JSON (undefined for a line that is not JSON). */
export function jsonLines(
  file: string,
): { line: number; value: Record<string, unknown> | undefined }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .map((text, index) => ({ text, line: index + 1 }))
    .filter(({ text }) => text.trim() !== "")
    .map(({ text, line }) => {
      try {
        const value: unknown = JSON.parse(text);
        return {
          line,
          value:
            typeof value === "object" && value !== null
              ? (value as Record<string, unknown>)
              : undefined,
        };
      } catch {
        return { line, value: undefined };
      }
    });
}

/** Call ids of the panels' tool items (calls kept in the panel before a compaction). */
export function panelCalls(conversations: readonly ImportedConversation[]): Set<string> {
  const calls = new Set<string>();
  for (const { conversation } of conversations) {
    for (const item of conversation.items)
      if (item.type === "tool" && item.callID !== undefined) calls.add(item.callID);
  }
  return calls;
}

/** Every tool call id in the histories, and every result by call id. */
export function historyCalls(conversations: readonly ImportedConversation[]): {
  calls: Set<string>;
  results: Map<string, string>;
} {
  const calls = new Set<string>();
  const results = new Map<string, string>();
  for (const { conversation } of conversations) {
    for (const message of conversation.history) {
      for (const block of message.content) {
        if (block.type === "toolCall") calls.add(block.id);
        if (block.type === "toolResult")
          results.set(block.callID, "content" in block ? block.content : "");
      }
    }
  }
  return { calls, results };
}

/** Every text the panels show (items' text, notices' text and detail). */
export function panelTexts(conversations: readonly ImportedConversation[]): Set<string> {
  const texts = new Set<string>();
  for (const { conversation } of conversations) {
    for (const item of conversation.items) {
      if ("text" in item && typeof item.text === "string") texts.add(item.text);
      if (item.type === "failure") texts.add(item.message);
    }
  }
  return texts;
}

/** True when every tool call of a history is answered in the tool message right after it. */
export function unansweredCalls(conversation: ImportedConversation["conversation"]): string[] {
  const open: string[] = [];
  conversation.history.forEach((message, index) => {
    if (message.role !== "assistant") return;
    const answered = new Set(
      (conversation.history[index + 1]?.role === "tool"
        ? (conversation.history[index + 1]?.content ?? [])
        : []
      )
        .filter((block) => block.type === "toolResult")
        .map((block) => (block.type === "toolResult" ? block.callID : "")),
    );
    for (const block of message.content) {
      if (block.type === "toolCall" && !answered.has(block.id)) open.push(block.id);
    }
  });
  return open;
}
