import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { importCodexRollout } from "../../packages/library/src/interop/codex/import.js";
import {
  fixtureFiles,
  historyCalls,
  jsonLines,
  panelCalls,
  panelTexts,
  shortName,
  unansweredCalls,
} from "./fixture-files.js";

const files = fixtureFiles("codex", ".jsonl");
const importFile = (file: string) => importCodexRollout(file, readFileSync(file));
const corpus = (path: string): string => files.find((file) => file.includes(path)) ?? path;

type Payload = Record<string, unknown>;
const texts = (content: unknown): string[] =>
  Array.isArray(content)
    ? (content as Payload[]).flatMap((part) => (typeof part.text === "string" ? [part.text] : []))
    : [];

describe("codex importer on the real corpus: nothing dropped silently", () => {
  for (const file of files) {
    it(`${shortName(file)}: every line imported or reported; messages, calls and outputs kept or reported`, () => {
      const result = importFile(file);
      const lines = jsonLines(file);
      expect(result.account.lines).toBe(lines.length);
      expect(result.account.imported + result.account.leftOut).toBe(lines.length);
      const reported = new Set(result.leftOut.flatMap((entry) => entry.lines));
      const { calls, results } = historyCalls(result.conversations);
      const panel = panelCalls(result.conversations);
      const shown = panelTexts(result.conversations);
      const history = result.conversations.flatMap(({ conversation }) =>
        conversation.history.flatMap((message) =>
          message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
        ),
      );
      const compacted = result.leftOut.some(
        (entry) => entry.what === "tool result content before a compaction boundary",
      );
      for (const { line, value } of lines) {
        const kept = (found: boolean): void => {
          if (!found)
            expect(reported.has(line), `line ${line} neither imported nor reported`).toBe(true);
        };
        if (value === undefined) {
          kept(false);
          continue;
        }
        if (value.type !== "response_item") continue;
        const payload = value.payload as Payload;
        if (payload.type === "message") {
          for (const text of texts(payload.content)) {
            kept(
              payload.role === "developer"
                ? shown.has(text)
                : history.includes(text) || shown.has(text) || compacted,
            );
          }
        }
        if (typeof payload.call_id === "string") {
          if (String(payload.type).endsWith("_output"))
            kept(results.has(payload.call_id) || (compacted && panel.has(payload.call_id)));
          else kept(calls.has(payload.call_id) || panel.has(payload.call_id));
        }
      }
      for (const imported of result.conversations) {
        expect(decodeConversation(encodeConversation(imported.conversation)).ok).toBe(true);
        expect(unansweredCalls(imported.conversation)).toEqual([]);
      }
    });
  }
});

describe("codex importer: the cases of issue 19", () => {
  it("developer messages are kept as such (notices), never merged into user messages", () => {
    const result = importFile(corpus("0.129/turn-2.jsonl"));
    const conversation = result.conversations[0]?.conversation;
    const developer = conversation?.items.filter(
      (item) => item.type === "notice" && item.kind === "developerMessage",
    );
    expect(developer?.length).toBe(2);
    const userTexts = conversation?.history
      .filter((message) => message.role === "user")
      .flatMap((message) =>
        message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
      );
    for (const item of developer ?? []) {
      if (item.type === "notice") expect(userTexts).not.toContain(item.text);
    }
  });

  it("custom_tool_call (apply_patch) is kept as a call with its free-form input and its output", () => {
    const file = corpus("0.125/");
    const result = importFile(file);
    const custom = jsonLines(file)
      .map(({ value }) => value?.payload as Payload | undefined)
      .filter((payload) => payload?.type === "custom_tool_call");
    expect(custom.length).toBe(3);
    const history = result.conversations[0]?.conversation.history ?? [];
    for (const payload of custom) {
      const call = history
        .flatMap((message) => message.content)
        .find((block) => block.type === "toolCall" && block.id === payload?.call_id);
      expect(call).toMatchObject({ name: "apply_patch", arguments: payload?.input });
      const item = result.conversations[0]?.conversation.items.find(
        (entry) => entry.type === "tool" && entry.callID === payload?.call_id,
      );
      expect(item).toMatchObject({
        summary: "custom tool call (free-form input)",
        status: "succeeded",
      });
    }
  });

  it("web_search_call becomes a webSearch item with its query", () => {
    const result = importFile(corpus("0.125/"));
    const searches = result.conversations[0]?.conversation.items.filter(
      (item) => item.type === "webSearch",
    );
    expect(searches?.length).toBe(3);
    for (const search of searches ?? [])
      if (search.type === "webSearch") expect(search.query.length).toBeGreaterThan(0);
  });

  it("encrypted reasoning is reported left out, one line per reasoning item", () => {
    const file = corpus("0.125/");
    const encrypted = jsonLines(file).filter(
      ({ value }) => typeof (value?.payload as Payload | undefined)?.encrypted_content === "string",
    );
    const entry = importFile(file).leftOut.find((left) => left.what === "encrypted reasoning");
    expect(entry?.lines).toEqual(encrypted.map(({ line }) => line));
  });

  it("a compacted line starts the history again from its replacement history", () => {
    const file = corpus("12-54-34");
    const compacted = jsonLines(file).find(({ value }) => value?.type === "compacted");
    const replacement = (compacted?.value?.payload as Payload).replacement_history as Payload[];
    const conversation = importFile(file).conversations[0]?.conversation;
    expect(
      conversation?.items.some((item) => item.type === "notice" && item.kind === "compacted"),
    ).toBe(true);
    // Its user and assistant messages open the history, in order (developer ones are notices).
    const expected = replacement
      .filter(
        (item) => item.type === "message" && (item.role === "user" || item.role === "assistant"),
      )
      .map((item) => texts(item.content).join("\n"));
    const firstTexts = conversation?.history
      .slice(0, expected.length)
      .map((message) =>
        message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n"),
      );
    expect(expected.length).toBeGreaterThan(10);
    expect(firstTexts).toEqual(expected);
  });

  it("a rollout that ends on a call without output gets Codex's aborted output, marked as added", () => {
    const conversation = importFile(corpus("13-19-38")).conversations[0]?.conversation;
    const last = conversation?.history[conversation.history.length - 1];
    expect(last?.content[0]).toMatchObject({
      type: "toolResult",
      isError: true,
      content: "aborted",
    });
    expect(
      conversation?.items.some(
        (item) => item.type === "notice" && item.kind === "interruptedToolResult",
      ),
    ).toBe(true);
  });

  it("usage is the session's total_token_usage with cached input as cache reads", () => {
    const file = corpus("0.129/turn-2.jsonl");
    const totals = jsonLines(file)
      .map(
        ({ value }) =>
          ((value?.payload as Payload | undefined)?.info as Payload | null | undefined)
            ?.total_token_usage as Payload | undefined,
      )
      .filter((total) => total !== undefined);
    const last = totals[totals.length - 1] as {
      input_tokens: number;
      cached_input_tokens: number;
      output_tokens: number;
    };
    expect(importFile(file).conversations[0]?.conversation.usage).toMatchObject({
      input: last.input_tokens - last.cached_input_tokens,
      cacheRead: last.cached_input_tokens,
      output: last.output_tokens,
    });
  });

  it("images the publisher redacted are kept as omitted images and reported", () => {
    const result = importFile(corpus("12-54-34"));
    const omitted = result.conversations[0]?.conversation.history
      .flatMap((message) => message.content)
      .filter((block) => block.type === "imageOmitted");
    expect(omitted?.length).toBeGreaterThan(0);
    expect(
      result.leftOut.find((entry) => entry.what === "image by reference")?.lines.length,
    ).toBeGreaterThan(0);
  });

  it("the layout before session_meta (a header line, bare response items, state records) is read too", () => {
    // Hand-written in that layout: the one public file in it has no licence (SOURCES.md, Gaps).
    const lines = [
      { id: "legacy-session", timestamp: "2025-05-01T10:00:00.000Z", instructions: "Be brief." },
      { record_type: "state" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
      { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_1" },
      { type: "function_call_output", call_id: "call_1", output: "README.md" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "One file." }] },
    ];
    const bytes = Buffer.from(lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
    const result = importCodexRollout("rollout-legacy.jsonl", bytes);
    expect(result.account).toMatchObject({ lines: 6, imported: 5, leftOut: 1 });
    const imported = result.conversations[0];
    expect(imported?.name).toBe("codex-legacy-session");
    expect(imported?.conversation.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(
      imported?.conversation.items.some(
        (item) =>
          item.type === "notice" && item.kind === "instructions" && item.text === "Be brief.",
      ),
    ).toBe(true);
  });
});
