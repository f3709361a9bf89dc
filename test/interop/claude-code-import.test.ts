import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { conversationSchema } from "../../packages/library/src/format/conversation-schema.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import type { FileImport } from "../../packages/library/src/interop/index.js";
import { importClaudeCodeFile } from "../../packages/library/src/interop/claude-code/import.js";
import {
  fixtureFiles,
  historyCalls,
  jsonLines,
  panelCalls,
  panelTexts,
  shortName,
  unansweredCalls,
} from "./fixture-files.js";

const files = fixtureFiles("claude-code", ".jsonl");

function importFile(file: string): FileImport {
  const meta = file.replace(/\.jsonl$/, ".meta.json");
  let metaText: string | undefined;
  try {
    metaText = readFileSync(meta, "utf8");
  } catch {
    metaText = undefined;
  }
  return importClaudeCodeFile(
    file,
    readFileSync(file),
    metaText === undefined ? {} : { meta: metaText },
  );
}

type Block = Record<string, unknown>;
const blocksOf = (value: Record<string, unknown>): Block[] => {
  const content = (value.message as Record<string, unknown> | undefined)?.content;
  return Array.isArray(content) ? (content as Block[]) : [];
};

describe("claude-code importer on the real corpus: nothing dropped silently", () => {
  it("the corpus has files of every version", () => {
    expect(files.length).toBeGreaterThan(40);
  });

  for (const file of files) {
    it(`${shortName(file)}: every line imported or reported, every prompt, call, result and thinking kept or reported`, () => {
      const result = importFile(file);
      const lines = jsonLines(file);
      // Every non-blank line is accounted for: imported, or left out with a reason.
      expect(result.account.lines).toBe(lines.length);
      expect(result.account.imported + result.account.leftOut).toBe(lines.length);
      const reportedLines = new Set(result.leftOut.flatMap((entry) => entry.lines));
      for (const entry of result.leftOut) expect(entry.reason.length).toBeGreaterThan(10);

      const { calls, results } = historyCalls(result.conversations);
      const texts = panelTexts(result.conversations);
      const panel = panelCalls(result.conversations);
      const compactedResults = result.leftOut.some(
        (entry) => entry.what === "tool result content before a compaction boundary",
      );
      for (const { line, value } of lines) {
        if (value === undefined) {
          expect(reportedLines.has(line)).toBe(true);
          continue;
        }
        const kept = (found: boolean): void => {
          if (!found)
            expect(reportedLines.has(line), `line ${line} neither imported nor reported`).toBe(
              true,
            );
        };
        const message = value.message as Record<string, unknown> | undefined;
        if (value.type === "user" && typeof message?.content === "string")
          kept(texts.has(message.content));
        for (const block of blocksOf(value)) {
          if (block.type === "tool_use" && typeof block.id === "string")
            kept(calls.has(block.id) || panel.has(block.id));
          if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
            const got = results.get(block.tool_use_id);
            // Before a compaction the call stays in the panel and the report names the result.
            const beforeCompaction =
              got === undefined && compactedResults && panel.has(block.tool_use_id);
            kept(
              beforeCompaction ||
                (got !== undefined && (typeof block.content !== "string" || got === block.content)),
            );
          }
          if (block.type === "thinking" && typeof block.thinking === "string")
            kept(texts.has(block.thinking));
          if (
            block.type === "text" &&
            typeof block.text === "string" &&
            value.type === "assistant"
          ) {
            kept(texts.has(block.text));
          }
        }
      }
      for (const imported of result.conversations) {
        // Valid format 1, canonical bytes decode to the same conversation, no dangling call.
        const bytes = encodeConversation(imported.conversation);
        const decoded = decodeConversation(bytes);
        expect(decoded.ok, decoded.ok ? "" : JSON.stringify(decoded)).toBe(true);
        expect(conversationSchema.safeParse(JSON.parse(bytes.toString("utf8"))).success).toBe(true);
        expect(unansweredCalls(imported.conversation)).toEqual([]);
        expect(imported.conversation.items[0]).toMatchObject({ type: "notice", kind: "imported" });
      }
    });
  }
});

const corpus = (path: string): string => files.find((file) => file.endsWith(path)) ?? path;

describe("claude-code importer: the cases of issue 19", () => {
  it("parallel tool results are paired by tool_use_id, not by the parent chain (20 of 20)", () => {
    const result = importFile(corpus("2.1-subagents/turn-2/subagents/agent-a485154.jsonl"));
    expect(result.conversations).toHaveLength(1);
    const { calls, results } = historyCalls(result.conversations);
    expect(calls.size).toBe(20);
    expect([...calls].every((id) => results.has(id))).toBe(true);
  });

  it("1.x sidechain lines go to their own conversation, never into the main agent's", () => {
    const file = corpus("1.0-real/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl");
    const result = importFile(file);
    // Two Task calls, two sub-agents: each sidechain root is its own conversation.
    expect(result.conversations.map((conversation) => conversation.name)).toHaveLength(3);
    const [main, ...agents] = result.conversations;
    const sideCalls = new Set(
      jsonLines(file)
        .filter(({ value }) => value?.isSidechain === true)
        .flatMap(({ value }) => blocksOf(value ?? {}))
        .filter((block) => block.type === "tool_use")
        .map((block) => String(block.id)),
    );
    expect(sideCalls.size).toBe(8);
    const mainCalls = historyCalls(main === undefined ? [] : [main]).calls;
    const agentCalls = historyCalls(agents).calls;
    expect([...sideCalls].filter((id) => mainCalls.has(id))).toEqual([]);
    expect([...sideCalls].every((id) => agentCalls.has(id))).toBe(true);
    for (const agent of agents) {
      expect(agent.name).toMatch(/^claude-code-5c0375b4-57a5-4f26-b12d-d022ee4e51b7-agent-/);
      expect(historyCalls([agent]).calls.size).toBeGreaterThan(0);
    }
  });

  it("a message with several user children: the newest branch is imported, the others reported", () => {
    const result = importFile(corpus("b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl"));
    const branches = result.leftOut.filter((entry) =>
      entry.what.endsWith("message on another branch"),
    );
    expect(branches.flatMap((entry) => entry.lines).length).toBeGreaterThan(5);
    const history = result.conversations[0]?.conversation.history ?? [];
    expect(history.length).toBeGreaterThan(0);
  });

  it("a compact_boundary starts the history again from the compact summary", () => {
    const result = importFile(corpus("2.1-real/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"));
    const conversation = result.conversations[0]?.conversation;
    expect(
      conversation?.items.some((item) => item.type === "notice" && item.kind === "compacted"),
    ).toBe(true);
    const summary = conversation?.items.find(
      (item) => item.type === "notice" && item.kind === "compactionSummary",
    );
    expect(summary).toBeDefined();
    const first = conversation?.history[0]?.content[0];
    expect(
      first?.type === "text" && summary?.type === "notice" && first.text === summary.text,
    ).toBe(true);
  });

  it("a session that stopped in a tool call gets Claude Code's interrupted result, marked as added", () => {
    const result = importFile(corpus("2.1-real/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"));
    const conversation = result.conversations[0]?.conversation;
    const notice = conversation?.items.find(
      (item) => item.type === "notice" && item.kind === "interruptedToolResult",
    );
    expect(notice).toBeDefined();
    const last = conversation?.history[conversation.history.length - 1];
    expect(last?.role).toBe("tool");
    expect(last?.content[0]).toMatchObject({
      type: "toolResult",
      isError: true,
      content: "[Request interrupted by user for tool use]",
    });
  });

  it("hook progress lines are kept as hook notices, never dropped", () => {
    const file = corpus("2.1-real/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    const hookLines = jsonLines(file).filter(
      ({ value }) =>
        value?.type === "progress" &&
        (value.data as { type?: string } | undefined)?.type === "hook_progress",
    );
    expect(hookLines.length).toBe(47);
    const result = importFile(file);
    const notices = result.conversations[0]?.conversation.items.filter(
      (item) =>
        item.type === "notice" && item.kind === "hook" && item.text.startsWith("hook_progress"),
    );
    expect(notices?.length).toBe(hookLines.length);
    expect(result.leftOut.some((entry) => entry.what === "progress line")).toBe(false);
  });

  it("a file with summaries only makes no conversation and reports each line", () => {
    const result = importFile(corpus("be89c3cd-bfbf-4c4f-a515-5af6e13249bf.jsonl"));
    expect(result.conversations).toEqual([]);
    expect(result.account).toMatchObject({ lines: 3, imported: 0, leftOut: 3 });
  });

  it("thinking is kept as thinking items and each signature left out is reported", () => {
    const result = importFile(corpus("2.1-interrupted/session-9eda1058.jsonl"));
    const thinking = result.conversations[0]?.conversation.items.filter(
      (item) => item.type === "thinking",
    );
    expect(thinking?.length).toBe(4);
    expect(result.leftOut.find((entry) => entry.what === "thinking signature")?.lines.length).toBe(
      4,
    );
  });

  it("usage is summed once per API message, not once per line of a split message", () => {
    const file = corpus("2.1-subagents/turn-2/subagents/agent-a485154.jsonl");
    const byMessage = new Map<string, number>();
    for (const { value } of jsonLines(file)) {
      const message = value?.message as
        { id?: string; usage?: { output_tokens?: number } } | undefined;
      if (value?.type === "assistant" && message?.id !== undefined)
        byMessage.set(message.id, message.usage?.output_tokens ?? 0);
    }
    const expected = [...byMessage.values()].reduce((sum, value) => sum + value, 0);
    expect(importFile(file).conversations[0]?.conversation.usage.output).toBe(expected);
  });
});
