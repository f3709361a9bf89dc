import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Item } from "../format/index.js";
import { ClaudeStreamParser } from "./claude-stream.js";
import type { AgentStreamEvent } from "./stream-events.js";

// Fixtures: stream lines of `claude -p --output-format stream-json --verbose`, each file's first
// line names its source.
function replay(lines: readonly string[]): { items: Item[]; events: AgentStreamEvent[] } {
  let next = 0;
  const parser = new ClaudeStreamParser(() => `i${++next}`);
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
  return { items, events };
}
const fixture = (name: string): string[] =>
  readFileSync(`test/fixtures/cli-agents/claude/${name}`, "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("//"));

describe("Claude Code stream parser", () => {
  it("reads the session id, and a subscription from apiKeySource none", () => {
    const { events } = replay([
      '{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-20250514","apiKeySource":"none"}',
    ]);
    expect(events).toEqual([
      { type: "session", id: "s-1" },
      { type: "billing", subscription: true },
    ]);
  });

  it("maps a WebSearch call and its Links line into a webSearch item", () => {
    const { items } = replay(fixture("web-search.jsonl"));
    expect(items).toEqual([
      {
        id: "i1",
        type: "webSearch",
        query: "best branding agencies",
        results: [
          {
            title: "Seven Best",
            url: "https://www.thedigitalelevator.com/blog/best-medical-device-marketing-agencies/",
          },
          {
            title: "Top for 2026",
            url: "https://wantbranding.com/best-healthcare-branding-agencies/",
          },
        ],
      },
    ]);
  });

  it("maps an MCP tool call with an error result into a failed tool item", () => {
    const { items } = replay(fixture("api-key-mcp-tool.jsonl"));
    expect(items[0]).toMatchObject({
      type: "tool",
      name: "mcp__jira__createJiraIssue",
      status: "failed",
      callID: "toolu_01HjxGPdkuSjRioaCW3t65iA",
      summary: "Example detailed description of the issue",
    });
    expect((items[0] as { detail?: string }).detail).toContain("valid project is required");
  });

  it("shows thinking with text and skips thinking sent without it", () => {
    const { items } = replay([
      '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"","signature":"abc"}]}}',
      '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"Let me check.","signature":"abc"},{"type":"redacted_thinking","data":"zzz"}]}}',
    ]);
    expect(items).toEqual([{ id: "i1", type: "thinking", text: "Let me check." }]);
  });

  it("an unknown event or content block becomes one notice, never a crash; quiet events are skipped", () => {
    const { items } = replay([
      '{"type":"stream_event","event":{"type":"message_start"}}',
      '{"type":"rate_limit_event","rate_limit_info":{}}',
      '{"type":"system","subtype":"hook_started"}',
      '{"type":"telemetry","n":1}',
      '{"type":"telemetry","n":2}',
      '{"type":"assistant","message":{"content":[{"type":"hologram"}, 7, null]}}',
      '{"type":"assistant","message":"nope"}',
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"never-started","content":"x"}]}}',
    ]);
    expect(items.map((item) => item.type === "notice" && item.text)).toEqual([
      "Claude Code sent an event verbatim does not know (telemetry); it was skipped.",
      "Claude Code sent a content block verbatim does not know (hologram); it was skipped.",
    ]);
  });

  it("maps the result line's usage (cache writes, one-hour writes, web searches) and the last request's usage", () => {
    const { events } = replay([
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        total_cost_usd: 0.5,
        usage: {
          input_tokens: 10,
          output_tokens: 20,
          cache_read_input_tokens: 30,
          cache_creation_input_tokens: 40,
          cache_creation: { ephemeral_5m_input_tokens: 15, ephemeral_1h_input_tokens: 25 },
          server_tool_use: { web_search_requests: 2 },
          iterations: [
            {
              input_tokens: 1,
              output_tokens: 2,
              cache_read_input_tokens: 3,
              cache_creation_input_tokens: 4,
            },
          ],
        },
      }),
    ]);
    expect(events[0]).toEqual({
      type: "usage",
      usage: {
        input: 10,
        output: 20,
        cacheRead: 30,
        cacheWrite: 40,
        webSearchRequests: 2,
        cacheWrite1h: 25,
        reportedCost: 0.5,
      },
      lastRound: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, webSearchRequests: 0 },
    });
    expect(events.at(-1)).toEqual({ type: "turnEnd", ok: true });
  });
});
