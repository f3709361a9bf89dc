import type { Item, ItemOfType } from "../format/index.js";
import {
  type AgentStreamEvent,
  type AgentStreamParser,
  type Fields,
  type ItemIdFactory,
  arrayField,
  detailText,
  isFields,
  numberField,
  objectField,
  parseJsonLine,
  quoteLine,
  stringField,
  summaryText,
} from "./stream-events.js";
import { usageFromCodex } from "./usage.js";

type ToolStatus = ItemOfType<"tool">["status"];

/**
 * Reads the stream of `codex exec --json` (docs/cli-agents.md has the mapping table):
 * `thread.started` gives the thread id; `item.started`/`item.updated`/`item.completed` give
 * agent messages, reasoning, commands, file changes, MCP tool calls, web searches and to-do
 * lists (the same Codex item id updates the same panel item); `turn.completed` gives usage;
 * `turn.failed` and `error` give failures. Any other event or item type becomes a `notice`.
 */
export class CodexStreamParser implements AgentStreamParser {
  malformedLine: string | undefined;
  sawTurnEnd = false;
  /** Panel items by Codex item id, so that updates replace what was shown. */
  private readonly items = new Map<string, Item>();
  private readonly searches = new Set<string>();
  private readonly noticed = new Set<string>();
  private lastError: string | undefined;

  constructor(private readonly newId: ItemIdFactory) {}

  push(line: string): AgentStreamEvent[] {
    const event = parseJsonLine(line);
    if (event === undefined) {
      this.malformedLine ??= quoteLine(line);
      return [];
    }
    const type = stringField(event, "type");
    switch (type) {
      case "thread.started": {
        const id = stringField(event, "thread_id");
        return id === undefined ? [] : [{ type: "session", id }];
      }
      case "turn.started":
      case "item.plan.delta":
        return [];
      case "item.started":
      case "item.updated":
      case "item.completed":
        return this.item(objectField(event, "item"), type === "item.completed");
      case "turn.completed":
        return this.turnCompleted(event);
      case "turn.failed":
        return this.turnFailed(stringField(objectField(event, "error"), "message"));
      case "error":
        return this.error(stringField(event, "message") ?? "unknown error");
      default:
        return this.notice(
          `event:${type ?? ""}`,
          `Codex sent an event verbatim does not know (${type ?? "no type"}); it was skipped.`,
        );
    }
  }

  private item(item: Fields | undefined, completed: boolean): AgentStreamEvent[] {
    if (item === undefined) return [];
    const codexId = stringField(item, "id") ?? this.newId();
    const kind = stringField(item, "type") ?? "";
    const previous = this.items.get(codexId);
    const id = previous?.id ?? this.newId();
    let panel: Item;
    const extra: AgentStreamEvent[] = [];
    switch (kind) {
      case "agent_message": {
        const text = stringField(item, "text") ?? "";
        if (!completed || text === "") return [];
        panel = { id, type: "assistant", text };
        extra.push({ type: "assistantText", text });
        break;
      }
      case "reasoning": {
        const text = stringField(item, "text") ?? "";
        if (text === "") return [];
        panel = { id, type: "thinking", text };
        break;
      }
      case "plan": {
        const text = stringField(item, "text") ?? "";
        if (text === "") return [];
        panel = { id, type: "notice", kind: "plan", text };
        break;
      }
      case "command_execution":
        panel = this.command(id, item);
        break;
      case "file_change":
        panel = this.fileChange(id, item);
        break;
      case "mcp_tool_call":
        panel = this.mcpToolCall(id, item);
        break;
      case "collab_tool_call":
        panel = tool(
          id,
          `agent ${stringField(item, "tool") ?? "tool"}`,
          statusOf(item),
          stringField(item, "prompt") ?? "",
        );
        break;
      case "web_search":
        panel = this.webSearch(id, codexId, item);
        break;
      case "todo_list":
        panel = this.todoList(id, item, completed);
        break;
      case "error":
        panel = {
          id,
          type: "notice",
          kind: "cliWarning",
          text: stringField(item, "message") ?? "",
        };
        break;
      default:
        return this.notice(
          `item:${kind}`,
          `Codex sent an item verbatim does not know (${kind || "no type"}); it was skipped.`,
        );
    }
    this.items.set(codexId, panel);
    return [{ type: "item", item: panel }, ...extra];
  }

  private command(id: string, item: Fields): Item {
    const exitCode = numberField(item, "exit_code");
    const output = stringField(item, "aggregated_output") ?? "";
    return {
      ...tool(id, "command", statusOf(item), stringField(item, "command") ?? ""),
      ...(exitCode === undefined ? {} : { statusText: `exit code ${exitCode}` }),
      ...(output === "" ? {} : { detail: detailText(output) }),
    };
  }

  private fileChange(id: string, item: Fields): Item {
    const changes = arrayField(item, "changes")
      .filter(isFields)
      .map(
        (change) =>
          `${stringField(change, "kind") ?? "change"} ${stringField(change, "path") ?? ""}`,
      );
    return {
      ...tool(id, "file change", statusOf(item), changes.join(", ")),
      ...(changes.length === 0 ? {} : { detail: changes.join("\n") }),
    };
  }

  private mcpToolCall(id: string, item: Fields): Item {
    const name = `${stringField(item, "server") ?? "mcp"}.${stringField(item, "tool") ?? "tool"}`;
    const args = Object.hasOwn(item, "arguments") ? item.arguments : undefined;
    const summary = args === undefined || args === null ? "" : JSON.stringify(args);
    const error = stringField(objectField(item, "error"), "message");
    const text = arrayField(objectField(item, "result"), "content")
      .filter(isFields)
      .map((block) => stringField(block, "text") ?? `[${stringField(block, "type") ?? "content"}]`)
      .join("\n");
    const detail = error ?? text;
    return {
      ...tool(id, name, statusOf(item), summary),
      ...(detail === "" ? {} : { detail: detailText(detail) }),
    };
  }

  private webSearch(id: string, codexId: string, item: Fields): Item {
    const action = objectField(item, "action");
    const query =
      stringField(item, "query") ||
      stringField(action, "query") ||
      stringField(action, "url") ||
      "";
    if (query !== "") this.searches.add(codexId);
    const results = arrayField(item, "results")
      .filter(isFields)
      .flatMap((result) => {
        const url = stringField(result, "url");
        return url === undefined ? [] : [{ title: stringField(result, "title") ?? url, url }];
      });
    return { id, type: "webSearch", query, results };
  }

  private todoList(id: string, item: Fields, completed: boolean): Item {
    const entries = arrayField(item, "items").filter(isFields);
    const done = entries.filter((entry) => entry["completed"] === true).length;
    const lines = entries.map(
      (entry) =>
        `${entry["completed"] === true ? "[x]" : "[ ]"} ${stringField(entry, "text") ?? ""}`,
    );
    return {
      ...tool(
        id,
        "to-do list",
        completed ? "succeeded" : "running",
        `${done} of ${entries.length} done`,
      ),
      ...(lines.length === 0 ? {} : { detail: lines.join("\n") }),
    };
  }

  private turnCompleted(event: Fields): AgentStreamEvent[] {
    this.sawTurnEnd = true;
    const usage = objectField(event, "usage");
    const events: AgentStreamEvent[] = [];
    if (usage !== undefined)
      events.push({ type: "usage", usage: usageFromCodex(usage, this.searches.size) });
    events.push(...this.unfinishedTools("cancelled"), { type: "turnEnd", ok: true });
    return events;
  }

  private turnFailed(message: string | undefined): AgentStreamEvent[] {
    this.sawTurnEnd = true;
    const text = message ?? "the turn failed";
    const events: AgentStreamEvent[] = [];
    // Codex writes the fatal `error` event and then `turn.failed` with the same message.
    if (text !== this.lastError) events.push(this.failure(text));
    events.push(...this.unfinishedTools("failed"), { type: "turnEnd", ok: false });
    return events;
  }

  private error(message: string): AgentStreamEvent[] {
    // "Reconnecting... 2/5 (…)": Codex retries a dropped stream and the turn goes on.
    if (/^Reconnecting\.\.\./.test(message)) {
      return [
        {
          type: "item",
          item: { id: this.newId(), type: "notice", kind: "cliRetry", text: message },
        },
      ];
    }
    this.lastError = message;
    return [this.failure(message)];
  }

  private failure(message: string): AgentStreamEvent {
    return {
      type: "item",
      item: {
        id: this.newId(),
        type: "failure",
        message: `Codex could not finish the turn: ${message}`,
      },
    };
  }

  /** Tools still running: marked `status` (the CLI ended without finishing them). */
  unfinishedTools(status: "failed" | "cancelled"): AgentStreamEvent[] {
    const events: AgentStreamEvent[] = [];
    for (const [codexId, item] of this.items) {
      if (item.type === "tool" && item.status === "running") {
        const ended: Item = { ...item, status, statusText: "ended without a result" };
        this.items.set(codexId, ended);
        events.push({ type: "item", item: ended });
      }
    }
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

function tool(id: string, name: string, status: ToolStatus, summary: string): ItemOfType<"tool"> {
  const line = summaryText(summary);
  return { id, type: "tool", name, status, ...(line === "" ? {} : { summary: line }) };
}

/** Codex statuses `in_progress`, `completed`, `failed`, `declined` as panel tool statuses. */
function statusOf(item: Fields): ToolStatus {
  switch (stringField(item, "status")) {
    case "completed":
      return "succeeded";
    case "failed":
      return "failed";
    case "declined":
      return "denied";
    default:
      return "running";
  }
}
