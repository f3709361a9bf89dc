import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import type { TrajectoryItem } from "../../trajectory/items.js";
import type { StoredTurnItem } from "../../trajectory/row.js";
import {
  arrayOf,
  compactJson,
  field,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";
import { readJsonLines } from "../jsonl.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "../trajectories/rows.js";
import { LEFT_OUT_EVENTS, LEFT_OUT_ITEMS, LEFT_OUT_LINES, own } from "./import.js";

const ENCRYPTED =
  "encrypted reasoning is provider-signed material trajectory items do not keep; the summary is kept as a reasoning item";

/** Message content parts as text and image URLs (data: URLs kept as they are). */
function parts(content: unknown): { text: string; images: string[] } {
  const direct = stringOf(content);
  if (direct !== undefined) return { text: direct, images: [] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of arrayOf(content) ?? []) {
    const record = recordOf(part);
    const text = stringOf(field(record, "text"));
    if (text !== undefined) texts.push(text);
    const image = stringOf(field(record, "image_url"));
    if (image !== undefined && /^(data:|https:)/.test(image)) images.push(image);
  }
  return { text: texts.join("\n"), images };
}

/** One response item as trajectory items; undefined when its type has no item. */
function itemsOf(
  payload: JsonRecord,
  names: Map<string, string>,
  leaveOut: (what: string, reason: string) => void,
): TrajectoryItem[] | undefined {
  const type = stringOf(field(payload, "type"));
  switch (type) {
    case "message": {
      const role = stringOf(field(payload, "role"));
      const { text, images } = parts(field(payload, "content"));
      if (role === "assistant") return [{ type: "agent_message", text }];
      if (role === "developer" || role === "system") return [{ type: "system_message", text }];
      return [
        {
          type: "user_message",
          text,
          ...(images.length === 0 ? {} : { images: images.map((url) => ({ url })) }),
        },
      ];
    }
    case "reasoning": {
      const summary = (arrayOf(field(payload, "summary")) ?? []).flatMap((part) => {
        const text = stringOf(field(recordOf(part), "text"));
        return text === undefined ? [] : [text];
      });
      if (stringOf(field(payload, "encrypted_content")) !== undefined)
        leaveOut("encrypted reasoning", ENCRYPTED);
      return [{ type: "reasoning", summary }];
    }
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call":
    case "tool_search_call": {
      const callId = stringOf(field(payload, "call_id")) ?? stringOf(field(payload, "id")) ?? "";
      const name =
        stringOf(field(payload, "name")) ??
        (type === "local_shell_call" ? "local_shell" : "tool_search");
      const raw =
        type === "custom_tool_call"
          ? field(payload, "input")
          : type === "local_shell_call"
            ? field(payload, "action")
            : field(payload, "arguments");
      names.set(callId, name);
      return [
        {
          type: "tool_call",
          call_id: callId === "" ? "call" : callId,
          name: name === "" ? "tool" : name,
          arguments: stringOf(raw) ?? compactJson(raw ?? {}),
          execution_mechanism: "local_dynamic",
        },
      ];
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output":
    case "tool_search_output": {
      const callId = stringOf(field(payload, "call_id")) ?? "call";
      const output = field(payload, "output") ?? field(payload, "tools");
      const record = recordOf(output);
      const text =
        stringOf(output) ?? stringOf(field(record, "content")) ?? compactJson(output ?? "");
      return [
        {
          type: "tool_result",
          call_id: callId,
          name: names.get(callId) ?? "tool",
          output: text,
          is_error: field(record, "success") === false,
          execution_mechanism: "local_dynamic",
        },
      ];
    }
    case "web_search_call": {
      const action = recordOf(field(payload, "action"));
      const query =
        stringOf(field(action, "query")) ??
        (arrayOf(field(action, "queries")) ?? []).map(String).join("; ");
      const status = stringOf(field(payload, "status"));
      return [
        {
          type: "web_search",
          call_id: stringOf(field(payload, "id")) ?? `search-${query.length}`,
          query,
          status: status === "completed" || status === "failed" ? status : "in_progress",
          execution_mechanism: "provider_hosted",
        },
      ];
    }
    default:
      return undefined;
  }
}

/**
 * A Codex rollout as the rows of a job trajectory: one turn per Codex turn (a `task_started`
 * or a `turn_context` with a new `turn_id` starts one), each line a record imported or reported
 * (docs/interop.md, "codex").
 */
export function importCodexRolloutAsRows(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
  const read = readJsonLines(utf8DecodeLenient(bytes));
  ledger.unreadableRecords(read.unreadable);
  let session = basename(file).replace(/\.jsonl$/, "");
  const rows: StoredTurnItem[] = [];
  const names = new Map<string, string>();
  let turn: TurnRowsBuilder | undefined;
  let turnId: string | undefined;
  const startTurn = (id: string): void => {
    if (id === turnId) return;
    if (turn !== undefined) rows.push(...turn.rows);
    turnId = id;
    turn = new TurnRowsBuilder(`codex:${session}:${id}`);
  };
  let turns = 0;
  // Rollouts before turn ids (0.4x) start a turn at each user message that follows other items.
  const hasTurnIds = read.lines.some(
    (line) => stringOf(field(recordOf(field(line.value, "payload")), "turn_id")) !== undefined,
  );
  let lastWasUser = false;
  for (const line of read.lines) {
    const type = stringOf(field(line.value, "type")) ?? "(no type)";
    const payload = recordOf(field(line.value, "payload")) ?? {};
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOutPart(line.line, what, reason);
    const drop = (what: string, reason: string): void =>
      ledger.leftOutRecord(line.line, what, reason);
    if (type === "session_meta") {
      session = stringOf(field(payload, "id")) ?? session;
      drop(
        "session_meta",
        "session facts (folder, version, instructions): job-level facts, not turn items",
      );
      continue;
    }
    const lineTurn = stringOf(field(payload, "turn_id"));
    if (
      type === "turn_context" ||
      (type === "event_msg" && stringOf(field(payload, "type")) === "task_started")
    ) {
      if (lineTurn !== undefined) startTurn(lineTurn);
      drop(
        type === "turn_context" ? "turn_context" : "task_started event",
        "a turn boundary: it starts the turn of the items that follow",
      );
      continue;
    }
    if (type === "response_item") {
      const itemType = stringOf(field(payload, "type")) ?? "(no type)";
      const items =
        own(LEFT_OUT_ITEMS, itemType) === undefined ? itemsOf(payload, names, leaveOut) : undefined;
      if (items === undefined) {
        drop(
          `response item ${itemType}`,
          own(LEFT_OUT_ITEMS, itemType) ??
            "a response item type with no trajectory item; reported so that nothing is lost silently",
        );
        continue;
      }
      const isUser = itemType === "message" && stringOf(field(payload, "role")) === "user";
      if (turn === undefined || (!hasTurnIds && isUser && !lastWasUser)) {
        startTurn(`turn-${++turns}`);
      }
      lastWasUser = isUser;
      items.forEach((item, index) =>
        turn?.add(`codex:L${line.line}${index === 0 ? "" : `.${index}`}`, item),
      );
      ledger.importedRecord();
      continue;
    }
    if (type === "event_msg" && stringOf(field(payload, "type")) === "error") {
      if (turn === undefined) startTurn(`turn-${++turns}`);
      turn?.add(`codex:L${line.line}`, {
        type: "error",
        message: stringOf(field(payload, "message")) ?? "",
      });
      ledger.importedRecord();
      continue;
    }
    if (type === "event_msg") {
      const eventType = stringOf(field(payload, "type")) ?? "(no type)";
      drop(
        `${eventType} event`,
        eventType === "user_message"
          ? "a copy of the user's message, which the response items hold"
          : (own(LEFT_OUT_EVENTS, eventType) ??
              "an event with no trajectory item (usage, state, timing); reported so that nothing is lost silently"),
      );
      continue;
    }
    drop(
      `${type} line`,
      type === "compacted"
        ? "a compaction: trajectory items have no compaction boundary; the items before and after it are kept"
        : (own(LEFT_OUT_LINES, type) ??
            `a line type with no trajectory item (${type}); reported so that nothing is lost silently`),
    );
  }
  if (turn !== undefined) rows.push(...turn.rows);
  return ledger.result(rows);
}
