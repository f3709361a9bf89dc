import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Item } from "../format/index.js";
import { CodexStreamParser } from "./codex-stream.js";
import type { AgentStreamEvent } from "./stream-events.js";

// Fixtures: stream lines of `codex exec --json`, each file's first line names its source.
function replay(lines: readonly string[]): {
  items: Item[];
  events: AgentStreamEvent[];
  parser: CodexStreamParser;
} {
  let next = 0;
  const parser = new CodexStreamParser(() => `i${++next}`);
  const items: Item[] = [];
  const events: AgentStreamEvent[] = [];
  for (const line of lines) {
    for (const event of parser.push(line)) {
      events.push(event);
      if (event.type !== "item") continue;
      const at = items.findIndex((item) => item.id === event.item.id);
      if (at === -1) items.push(event.item);
      else items[at] = event.item;
    }
  }
  return { items, events, parser };
}
const fixture = (name: string): string[] =>
  readFileSync(`test/fixtures/cli-agents/codex/${name}`, "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("//"));

describe("Codex stream parser", () => {
  it("maps to-do lists, commands, file changes, MCP tool calls, web searches and error items", () => {
    const { items, events } = replay(fixture("items-doc-examples.jsonl"));
    expect(items).toEqual([
      {
        id: "i1",
        type: "tool",
        name: "to-do list",
        status: "succeeded",
        summary: "2 of 2 done",
        detail: "[x] Install dependencies\n[x] Run tests",
      },
      {
        id: "i2",
        type: "tool",
        name: "command",
        status: "succeeded",
        summary: "npm install",
        statusText: "exit code 0",
        detail: "added 42 packages",
      },
      {
        id: "i3",
        type: "tool",
        name: "file change",
        status: "succeeded",
        summary: "update src/app.js, add src/newfile.js",
        detail: "update src/app.js\nadd src/newfile.js",
      },
      {
        id: "i4",
        type: "tool",
        name: "filesystem.read_file",
        status: "failed",
        summary: '{"path":"/nonexistent/file.txt"}',
        detail: "File not found",
      },
      { id: "i5", type: "webSearch", query: "rust async programming best practices", results: [] },
      {
        id: "i6",
        type: "notice",
        kind: "cliWarning",
        text: "Warning: This operation may take a long time",
      },
    ]);
    expect(events.at(-2)).toEqual({
      type: "usage",
      usage: { input: 200, output: 120, cacheRead: 50, cacheWrite: 0, webSearchRequests: 1 },
    });
  });

  it("reads live web_search lines (query in `action`, `id` written twice) and retry notices", () => {
    const { items } = replay(fixture("web-search-live.jsonl"));
    expect(items).toEqual([
      { id: "i1", type: "webSearch", query: "Mindsera journaling app founder", results: [] },
      { id: "i2", type: "webSearch", query: "", results: [] },
      {
        id: "i3",
        type: "notice",
        kind: "cliRetry",
        text: "Reconnecting... 1/5 (stream disconnected before completion: Our servers are currently overloaded. Please try again later.)",
      },
      { id: "i4", type: "assistant", text: "ping-1" },
    ]);
  });

  it("an unknown event or item type becomes one notice, never a crash", () => {
    const { items, parser } = replay([
      '{"type":"thread.started","thread_id":"t"}',
      '{"type":"session.configured","model":"gpt-6"}',
      '{"type":"session.configured","model":"gpt-6"}',
      '{"type":"item.completed","item":{"id":"item_0","type":"hologram","text":"?"}}',
      '{"type":"item.completed","item":"not an object"}',
      "[1,2,3]",
      '{"type":"turn.completed","usage":{"input_tokens":"many"}}',
    ]);
    expect(items.map((item) => item.type === "notice" && item.text)).toEqual([
      "Codex sent an event verbatim does not know (session.configured); it was skipped.",
      "Codex sent an item verbatim does not know (hologram); it was skipped.",
    ]);
    expect(parser.malformedLine).toBe("[1,2,3]");
    expect(parser.sawTurnEnd).toBe(true);
  });

  it("a running command is marked cancelled when the stream ends without it", () => {
    const { parser } = replay([
      '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep 9","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
    ]);
    expect(parser.unfinishedTools("cancelled")).toEqual([
      {
        type: "item",
        item: {
          id: "i1",
          type: "tool",
          name: "command",
          status: "cancelled",
          summary: "sleep 9",
          statusText: "ended without a result",
        },
      },
    ]);
  });
});
