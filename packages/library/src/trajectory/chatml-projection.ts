import type {
  ChatMLContentPart,
  ChatMLMessage,
  ChatMLMetadata,
  ChatMLToolCall,
} from "../history/chatml.js";
import {
  BUILT_IN_TOOL_NAMES,
  type CommandExecutionItem,
  type ExecutionMechanism,
  type FileChangeItem,
  type TrajectoryItem,
  type WebSearchItem,
} from "./items.js";
import { groupRowsByTurn, type StoredTurnItem } from "./row.js";
import type { ChatMLTrajectory, ChatMLTurnSpan } from "./trajectory.js";

/**
 * The ChatML projection of stored job items (SPEC B9, B15), done at read time:
 * - `system_message` → `system`; `user_message` → `user`; `agent_message` → `assistant`;
 * - `tool_call` → an entry of `tool_calls` on the assistant message just before it (or on a new
 *   assistant message with `content: null`); `tool_result` → `tool` with `tool_call_id`, `name`
 *   and `metadata.execution_mechanism` (B10);
 * - `command_execution`, `file_change`, `web_search` are a call and its result in one item:
 *   a tool call (`shell`, `apply_patch`, `web_search`) and, once ended, a `tool` message;
 * - `reasoning`, `plan`, `error`, `notice` project to no message: they stay stored for replay.
 * Messages built from redacted or truncated items say so in their `metadata`.
 */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
interface AssistantDraft {
  role: "assistant";
  content: string | null;
  tool_calls?: ChatMLToolCall[];
  metadata?: Mutable<ChatMLMetadata>;
}

function itemFacts(item: TrajectoryItem): Mutable<ChatMLMetadata> | undefined {
  if (item.redacted !== true && item.content_truncated !== true) return undefined;
  const facts: Mutable<ChatMLMetadata> = {};
  if (item.redacted === true) facts.redacted = true;
  if (item.content_truncated === true) facts.content_truncated = true;
  return facts;
}

function withFacts<M extends object>(message: M, item: TrajectoryItem): M {
  const facts = itemFacts(item);
  return facts === undefined ? message : { ...message, metadata: facts };
}

/** Projects one turn's items, in position order, to ChatML messages. */
export function projectItemsToChatML(items: readonly TrajectoryItem[]): ChatMLMessage[] {
  const messages: ChatMLMessage[] = [];
  let open: AssistantDraft | undefined;

  const call = (item: TrajectoryItem, id: string, name: string, args: string): void => {
    if (open === undefined) {
      open = { role: "assistant", content: null };
      messages.push(open);
    }
    (open.tool_calls ??= []).push({ id, type: "function", function: { name, arguments: args } });
    const facts = itemFacts(item);
    if (facts !== undefined) open.metadata = { ...open.metadata, ...facts };
  };
  const result = (
    item: TrajectoryItem,
    id: string,
    name: string,
    content: string,
    mechanism: ExecutionMechanism,
  ): void => {
    messages.push({
      role: "tool",
      tool_call_id: id,
      name,
      content,
      metadata: { execution_mechanism: mechanism, ...itemFacts(item) },
    });
    open = undefined;
  };

  for (const item of items) {
    switch (item.type) {
      case "system_message":
        messages.push(withFacts({ role: "system", content: item.text }, item));
        open = undefined;
        break;
      case "user_message": {
        const content: string | ChatMLContentPart[] =
          item.images === undefined || item.images.length === 0
            ? item.text
            : [
                ...(item.text === "" ? [] : [{ type: "text" as const, text: item.text }]),
                ...item.images.map((image) => ({
                  type: "image_url" as const,
                  image_url: { url: image.url },
                })),
              ];
        messages.push(withFacts({ role: "user", content }, item));
        open = undefined;
        break;
      }
      case "agent_message": {
        const draft: AssistantDraft = { role: "assistant", content: item.text };
        const facts = itemFacts(item);
        if (facts !== undefined) draft.metadata = facts;
        messages.push(draft);
        open = draft;
        break;
      }
      case "tool_call":
        call(item, item.call_id, item.name, item.arguments);
        break;
      case "tool_result":
        result(item, item.call_id, item.name, item.output, item.execution_mechanism);
        break;
      case "command_execution":
      case "file_change":
      case "web_search": {
        const name = BUILT_IN_TOOL_NAMES[item.type];
        call(item, item.call_id, name, builtInArguments(item));
        if (item.status !== "in_progress") {
          result(item, item.call_id, name, builtInResult(item), item.execution_mechanism);
        }
        break;
      }
      case "reasoning":
      case "plan":
      case "error":
      case "notice":
        break;
      default:
        return unreachable(item);
    }
  }
  return messages;
}

function unreachable(value: never): never {
  throw new TypeError(`unknown trajectory item ${JSON.stringify(value)}`);
}

type BuiltInItem = CommandExecutionItem | FileChangeItem | WebSearchItem;

/** The arguments of a built-in call, as compact JSON with a fixed key order. */
function builtInArguments(item: BuiltInItem): string {
  switch (item.type) {
    case "command_execution":
      return JSON.stringify({ command: item.command, cwd: item.cwd });
    case "file_change":
      return JSON.stringify({
        changes: item.changes.map((change) => ({
          path: change.path,
          kind: change.kind,
          diff: change.diff,
          move_path: change.move_path,
        })),
      });
    case "web_search":
      return JSON.stringify({ query: item.query });
    default:
      return unreachable(item);
  }
}

/** The result text of a built-in call that ended. */
function builtInResult(item: BuiltInItem): string {
  const notes: string[] = [];
  switch (item.type) {
    case "command_execution":
      if (item.output !== "") notes.push(item.output);
      if (item.exit_code !== null && item.exit_code !== 0)
        notes.push(`[exit code ${item.exit_code}]`);
      if (item.status === "failed" && item.exit_code === null) notes.push("[failed]");
      break;
    case "file_change":
      notes.push(item.status === "completed" ? "[applied]" : `[${item.status}]`);
      break;
    case "web_search":
      if (item.results !== undefined) {
        notes.push(
          JSON.stringify(
            item.results.map((hit) => ({ title: hit.title, url: hit.url, snippet: hit.snippet })),
          ),
        );
      }
      if (item.status !== "completed") notes.push(`[${item.status}]`);
      break;
    default:
      return unreachable(item);
  }
  if (item.status === "declined" && !notes.includes("[declined]")) notes.push("[declined]");
  return notes.join("\n");
}

export interface TrajectoryProjectionOptions {
  /** The job's turns in order, including turns without rows (B9: an empty trajectory). */
  readonly turnOrder?: readonly string[];
}

/** Projects stored rows (any order) to one ChatML trajectory: turns in order, items in
 *  position order; `metadata` says whether any item was redacted or truncated. */
export function projectTrajectoryToChatML(
  rows: readonly StoredTurnItem[],
  options: TrajectoryProjectionOptions = {},
): ChatMLTrajectory {
  const messages: ChatMLMessage[] = [];
  const turns: ChatMLTurnSpan[] = [];
  let redacted = false;
  let truncated = false;
  for (const turn of groupRowsByTurn(rows, options.turnOrder)) {
    const items = turn.rows.map((row) => row.item);
    for (const item of items) {
      if (item.redacted === true) redacted = true;
      if (item.content_truncated === true) truncated = true;
    }
    const projected = projectItemsToChatML(items);
    messages.push(...projected);
    turns.push({ turn_id: turn.turn_id, message_count: projected.length });
  }
  return { messages, metadata: { redacted, content_truncated: truncated }, turns };
}
