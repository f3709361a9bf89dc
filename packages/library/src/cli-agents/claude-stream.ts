import type { Item, ItemOfType } from "../format/index.js";
import {
  type AgentStreamEvent,
  type AgentStreamParser,
  type Fields,
  type ItemIdFactory,
  arrayField,
  booleanField,
  detailText,
  isFields,
  numberField,
  objectField,
  parseJsonLine,
  quoteLine,
  stringField,
  summaryText,
} from "./stream-events.js";
import { usageFromClaude } from "./usage.js";

/** Top-level events of `claude -p --output-format stream-json --verbose` read without a notice. */
const QUIET_TYPES = new Set([
  "stream_event",
  "rate_limit_event",
  "control_request",
  "control_response",
  "keep_alive",
]);

/**
 * Reads the stream of `claude -p --output-format stream-json --verbose` (docs/cli-agents.md has
 * the mapping table): `system`/`init` gives the session id and whether the CLI runs on a
 * subscription; `assistant` messages give text, thinking and tool calls; `user` messages give
 * tool results; `result` gives usage, cost and success. Any other event becomes a `notice`.
 */
export class ClaudeStreamParser implements AgentStreamParser {
  malformedLine: string | undefined;
  sawTurnEnd = false;
  private readonly tools = new Map<string, ItemOfType<"tool"> | ItemOfType<"webSearch">>();
  private readonly noticed = new Set<string>();
  private lastRoundUsage: Fields | undefined;

  constructor(private readonly newId: ItemIdFactory) {}

  push(line: string): AgentStreamEvent[] {
    const event = parseJsonLine(line);
    if (event === undefined) {
      this.malformedLine ??= quoteLine(line);
      return [];
    }
    const type = stringField(event, "type");
    switch (type) {
      case "system":
        return this.system(event);
      case "assistant":
        return this.assistant(event);
      case "user":
        return this.user(event);
      case "result":
        return this.result(event);
      default:
        if (type !== undefined && QUIET_TYPES.has(type)) return [];
        return this.notice(
          `event:${type ?? "(no type)"}`,
          `Claude Code sent an event verbatim does not know (${type ?? "no type"}); it was skipped.`,
        );
    }
  }

  private system(event: Fields): AgentStreamEvent[] {
    if (stringField(event, "subtype") !== "init") return [];
    const events: AgentStreamEvent[] = [];
    const session = stringField(event, "session_id");
    if (session !== undefined) events.push({ type: "session", id: session });
    const keySource = stringField(event, "apiKeySource");
    // "none": no API key, so the CLI runs on the signed-in Claude subscription.
    if (keySource !== undefined)
      events.push({ type: "billing", subscription: keySource === "none" });
    return events;
  }

  private assistant(event: Fields): AgentStreamEvent[] {
    const message = objectField(event, "message");
    const usage = objectField(message, "usage");
    if (usage !== undefined) this.lastRoundUsage = usage;
    const events: AgentStreamEvent[] = [];
    for (const block of arrayField(message, "content")) {
      if (!isFields(block)) continue;
      events.push(...this.assistantBlock(block));
    }
    return events;
  }

  private assistantBlock(block: Fields): AgentStreamEvent[] {
    switch (stringField(block, "type")) {
      case "text": {
        const text = stringField(block, "text") ?? "";
        if (text === "") return [];
        return [
          { type: "item", item: { id: this.newId(), type: "assistant", text } },
          { type: "assistantText", text },
        ];
      }
      case "thinking": {
        // With thinking display off the CLI sends the block with empty text and a signature.
        const text = stringField(block, "thinking") ?? "";
        return text === ""
          ? []
          : [{ type: "item", item: { id: this.newId(), type: "thinking", text } }];
      }
      case "redacted_thinking":
        return [];
      case "tool_use":
      case "server_tool_use":
        return this.toolUse(block);
      case "web_search_tool_result":
        return this.toolResult(block);
      default:
        return this.notice(
          `block:${stringField(block, "type") ?? ""}`,
          `Claude Code sent a content block verbatim does not know (${stringField(block, "type") ?? "no type"}); it was skipped.`,
        );
    }
  }

  private toolUse(block: Fields): AgentStreamEvent[] {
    const callID = stringField(block, "id") ?? this.newId();
    const name = stringField(block, "name") ?? "tool";
    const input = objectField(block, "input");
    let item: ItemOfType<"tool"> | ItemOfType<"webSearch">;
    if (name === "WebSearch" || name === "web_search") {
      item = {
        id: this.newId(),
        type: "webSearch",
        query: stringField(input, "query") ?? "",
        results: [],
      };
    } else {
      const summary = toolSummary(name, input);
      item = {
        id: this.newId(),
        type: "tool",
        name,
        status: "running",
        callID,
        ...(summary === "" ? {} : { summary }),
      };
    }
    this.tools.set(callID, item);
    return [{ type: "item", item }];
  }

  private user(event: Fields): AgentStreamEvent[] {
    const message = objectField(event, "message");
    const events: AgentStreamEvent[] = [];
    for (const block of arrayField(message, "content")) {
      // Text in a user event is the CLI's own (e.g. "[Request interrupted by user]"): not shown.
      if (isFields(block) && stringField(block, "type") === "tool_result") {
        events.push(...this.toolResult(block));
      }
    }
    return events;
  }

  private toolResult(block: Fields): AgentStreamEvent[] {
    const callID = stringField(block, "tool_use_id");
    const started = callID === undefined ? undefined : this.tools.get(callID);
    if (started === undefined || callID === undefined) return [];
    const isError = booleanField(block, "is_error") === true;
    const text = resultText(block.content);
    let item: Item;
    if (started.type === "webSearch") {
      const results = isError ? [] : searchResults(block.content, text);
      item = {
        ...started,
        results,
        ...(isError && text !== "" ? { detail: detailText(text) } : {}),
      };
    } else {
      item = {
        ...started,
        status: isError ? "failed" : "succeeded",
        ...(text === "" ? {} : { detail: detailText(text) }),
      };
    }
    this.tools.delete(callID);
    return [{ type: "item", item }];
  }

  private result(event: Fields): AgentStreamEvent[] {
    this.sawTurnEnd = true;
    const events: AgentStreamEvent[] = [];
    const session = stringField(event, "session_id");
    if (session !== undefined) events.push({ type: "session", id: session });
    const usage = objectField(event, "usage");
    if (usage !== undefined) {
      const turn = usageFromClaude(usage);
      const cost = numberField(event, "total_cost_usd");
      const iterations = arrayField(usage, "iterations");
      const last = iterations[iterations.length - 1];
      const lastRound = isFields(last) ? last : this.lastRoundUsage;
      events.push({
        type: "usage",
        usage: cost === undefined ? turn : { ...turn, reportedCost: cost },
        ...(lastRound === undefined ? {} : { lastRound: usageFromClaude(lastRound) }),
      });
    }
    const failed =
      booleanField(event, "is_error") === true ||
      (stringField(event, "subtype") ?? "success") !== "success";
    if (failed) {
      const errors = arrayField(event, "errors").filter((e): e is string => typeof e === "string");
      const reason =
        errors.join("\n") ||
        stringField(event, "result") ||
        `the run ended with ${stringField(event, "subtype") ?? "an error"}`;
      events.push({
        type: "item",
        item: {
          id: this.newId(),
          type: "failure",
          message: `Claude Code could not finish the turn: ${reason}`,
        },
      });
    }
    events.push(...this.unfinishedTools(failed ? "failed" : "cancelled"));
    events.push({ type: "turnEnd", ok: !failed });
    return events;
  }

  /** Tool calls still running: marked `status` (the CLI ended without their results). */
  unfinishedTools(status: "failed" | "cancelled"): AgentStreamEvent[] {
    const events: AgentStreamEvent[] = [];
    for (const item of this.tools.values()) {
      if (item.type === "tool") {
        events.push({
          type: "item",
          item: { ...item, status, statusText: "ended without a result" },
        });
      }
    }
    this.tools.clear();
    return events;
  }

  private notice(key: string, text: string): AgentStreamEvent[] {
    if (this.noticed.has(key)) return [];
    this.noticed.add(key);
    return [
      { type: "item", item: { id: this.newId(), type: "notice", kind: "cliUnknownEvent", text } },
    ];
  }
}

/** The line a tool item shows under its name: the command, the path, the pattern, … */
function toolSummary(name: string, input: Fields | undefined): string {
  for (const key of [
    "command",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
  ]) {
    const value = stringField(input, key);
    if (value !== undefined && value !== "") return summaryText(value);
  }
  if (input === undefined) return "";
  const json = JSON.stringify(input);
  return json === "{}" ? "" : summaryText(json);
}

/** A tool result's content as text: a string, or the text of its text blocks. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (isFields(block) && stringField(block, "type") === "text")
      parts.push(stringField(block, "text") ?? "");
  }
  return parts.join("\n");
}

/**
 * Results of a web search: from `web_search_result` blocks (the API's server tool), or from the
 * `Links: [{"title":…,"url":…}]` line of Claude Code's WebSearch tool result.
 */
function searchResults(content: unknown, text: string): { title: string; url: string }[] {
  const results: { title: string; url: string }[] = [];
  if (Array.isArray(content)) {
    for (const block of content) {
      const url = stringField(isFields(block) ? block : undefined, "url");
      if (url !== undefined)
        results.push({ title: stringField(block as Fields, "title") ?? url, url });
    }
    if (results.length > 0) return results;
  }
  const match = /^Links: (\[.*\])$/m.exec(text);
  if (match?.[1] === undefined) return results;
  let links: unknown;
  try {
    links = JSON.parse(match[1]);
  } catch {
    return results;
  }
  if (!Array.isArray(links)) return results;
  for (const link of links) {
    if (!isFields(link)) continue;
    const url = stringField(link, "url");
    if (url !== undefined) results.push({ title: stringField(link, "title") ?? url, url });
  }
  return results;
}
