import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { sha256Hex } from "../../core/hash.js";
import type { Usage } from "../../format/conversation-schema.js";
import { ConversationBuilder } from "../conversation-builder.js";
import { IMPORTED_NOTICE_KIND, packageName, type FileImport } from "../imported.js";
import {
  arrayOf,
  compactJson,
  countOf,
  field,
  recordOf,
  stringOf,
  without,
  type JsonRecord,
} from "../json-access.js";
import { readJsonLines } from "../jsonl.js";
import { LeftOutLedger, LineLedger, reportCompaction } from "../report.js";
import { addResponseItem, CODEX_INTERRUPTED_OUTPUT } from "./response-items.js";

const DUPLICATE =
  "a copy, in Codex's event stream, of what the response items hold (which are imported)";

/** Event types left out, and why. */
export const LEFT_OUT_EVENTS: Readonly<Record<string, string>> = {
  agent_message: DUPLICATE,
  agent_reasoning: DUPLICATE,
  agent_reasoning_raw_content: DUPLICATE,
  exec_command_end: `${DUPLICATE} (with the exit code and duration of the command)`,
  patch_apply_end: `${DUPLICATE} (with the files the patch changed)`,
  mcp_tool_call_end: `${DUPLICATE} (with the duration of the call)`,
  web_search_end: DUPLICATE,
  image_generation_end: DUPLICATE,
  view_image_tool_call: DUPLICATE,
  dynamic_tool_call_request: DUPLICATE,
  dynamic_tool_call_response: DUPLICATE,
  context_compacted: "a copy of the compacted line, which is imported",
  item_completed: DUPLICATE,
  task_started: "turn bookkeeping (start time, context window)",
  task_complete: "turn bookkeeping (end time, a copy of the last answer)",
  "turn.completed": "turn bookkeeping of the 0.5x layout; its usage is summed",
};

/** Line types (outside response items and events) left out, and why. */
export const LEFT_OUT_LINES: Readonly<Record<string, string>> = {
  world_state: "Codex's snapshot of its settings and environment, not conversation",
  inter_agent_communication_metadata: "Codex's multi-agent bookkeeping, not conversation",
};

export const LEFT_OUT_ITEMS: Readonly<Record<string, string>> = {
  ghost_snapshot: "Codex's git snapshot for its own undo, not conversation",
};

export function own(table: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Token counts of Codex (input includes the cached part) in format 1's terms (A7). */
function usageOf(record: JsonRecord | undefined): Usage | undefined {
  if (record === undefined) return undefined;
  const cached = countOf(field(record, "cached_input_tokens"));
  const input = countOf(field(record, "input_tokens") ?? field(record, "prompt"));
  return {
    input: Math.max(0, input - cached),
    output: countOf(field(record, "output_tokens") ?? field(record, "completion")),
    cacheRead: cached,
    cacheWrite: 0,
    webSearchRequests: 0,
  };
}

/**
 * Imports one Codex rollout file (docs/interop.md, "codex") as one conversation, each line
 * imported or reported left out.
 */
export function importCodexRollout(file: string, bytes: Uint8Array): FileImport {
  const sourceSha256 = sha256Hex(bytes);
  const read = readJsonLines(utf8DecodeLenient(bytes));
  const ledger = new LineLedger(new LeftOutLedger());
  ledger.file(file, read.total);
  ledger.unreadableLines(file, read.unreadable);
  let sessionId: string | undefined;
  for (const line of read.lines) {
    const meta = recordOf(field(line.value, "payload"));
    if (stringOf(field(line.value, "type")) === "session_meta") {
      sessionId = stringOf(field(meta, "id"));
      if (sessionId !== undefined) break;
    }
    // The layout before session_meta: a first line with the session's id and no type.
    if (line === read.lines[0] && isLegacyHeader(line.value)) {
      sessionId = stringOf(field(line.value, "id"));
      if (sessionId !== undefined) break;
    }
  }
  sessionId ??= basename(file).replace(/\.jsonl$/, "");
  const builder = new ConversationBuilder();
  builder.notice(
    "imported",
    IMPORTED_NOTICE_KIND,
    `Imported from Codex: session ${sessionId} (${basename(file)}).`,
    compactJson({
      source: "codex",
      sourceId: sessionId,
      file: basename(file),
      sha256: sourceSha256,
    }),
  );
  let responseKey = "start";
  let summedUsage: Usage | undefined;
  /**
   * Each model call's report is placed on the newest assistant message. Codex repeats a call's
   * report unchanged; 0.4x writes it before the call's items and repeats it after them (the
   * repeat moves it), and its last call may have no repeat (placed again at the end).
   */
  let lastReport: { id: string; usage: Usage; repeated: boolean } | undefined;
  let reportsLead = false;
  for (const line of read.lines) {
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOut.add(file, what, reason, line.line);
    const dropLine = (what: string, reason: string): void =>
      ledger.leftOutLine(file, line.line, what, reason);
    // The layout before session_meta: a header line, bare response items, state records.
    const legacyItem =
      field(line.value, "payload") === undefined &&
      LEGACY_ITEM_TYPES.has(stringOf(field(line.value, "type")) ?? "");
    const legacyHeader = line === read.lines[0] && isLegacyHeader(line.value);
    const type = legacyItem
      ? "response_item"
      : legacyHeader
        ? "session_meta"
        : (stringOf(field(line.value, "type")) ??
          stringOf(field(line.value, "record_type")) ??
          "(no type)");
    const payload =
      legacyItem || legacyHeader ? line.value : recordOf(field(line.value, "payload"));
    const id = `L${line.line}`;
    if (payload === undefined) {
      dropLine(
        `${type} line`,
        "a line without a payload (a record of Codex's own state, e.g. record_type state)",
      );
      continue;
    }
    switch (type) {
      case "response_item": {
        const itemType = stringOf(field(payload, "type")) ?? "(no type)";
        const leftOutItem = own(LEFT_OUT_ITEMS, itemType);
        if (leftOutItem !== undefined) {
          dropLine(itemType, leftOutItem);
          continue;
        }
        const { known, nextKey } = addResponseItem(payload, id, builder, leaveOut, responseKey);
        if (!known) {
          dropLine(
            `response item ${itemType}`,
            "a response item type this importer does not know; reported so that nothing is lost silently",
          );
          continue;
        }
        responseKey = nextKey;
        break;
      }
      case "session_meta": {
        const instructions =
          stringOf(field(recordOf(field(payload, "base_instructions")), "text")) ??
          stringOf(field(payload, "instructions"));
        builder.notice(
          id,
          "session",
          `Codex ${stringOf(field(payload, "cli_version")) ?? ""} session ${stringOf(field(payload, "id")) ?? ""} in ${stringOf(field(payload, "cwd")) ?? ""}`,
          compactJson(without(payload, new Set(["base_instructions", "instructions"]))),
        );
        if (instructions !== undefined)
          builder.notice(`${id}.instructions`, "instructions", instructions);
        break;
      }
      case "turn_context": {
        const model = stringOf(field(payload, "model"));
        if (model !== undefined) {
          builder.model = model;
          builder.provider = "openai";
        }
        leaveOut(
          "turn_context settings",
          "per-turn settings (working folder, approval and sandbox policy, effort); the model is kept as the conversation's model",
        );
        break;
      }
      case "compacted": {
        const message = stringOf(field(payload, "message")) ?? "";
        builder.notice(
          id,
          "compacted",
          "The conversation was compacted: the history starts again from Codex's replacement history.",
          message,
        );
        reportCompaction(builder.compacted(), leaveOut);
        const replacement = arrayOf(field(payload, "replacement_history"));
        if (replacement === undefined) {
          builder.user([{ type: "text", text: message }]);
        } else {
          replacement.forEach((entry, index) => {
            const record = recordOf(entry);
            if (record !== undefined)
              responseKey = addResponseItem(
                record,
                `${id}.${index}`,
                builder,
                leaveOut,
                responseKey,
              ).nextKey;
          });
        }
        break;
      }
      case "event_msg": {
        const eventType = stringOf(field(payload, "type")) ?? "(no type)";
        if (eventType === "user_message") {
          const images =
            (arrayOf(field(payload, "images")) ?? []).length +
            (arrayOf(field(payload, "local_images")) ?? []).length;
          builder.item({
            id,
            type: "user",
            text: stringOf(field(payload, "message")) ?? "",
            ...(images > 0 ? { hasImage: true } : {}),
          });
        } else if (eventType === "token_count") {
          const info = recordOf(field(payload, "info"));
          const totals = recordOf(field(info, "total_token_usage"));
          const total = usageOf(totals);
          const last = usageOf(recordOf(field(info, "last_token_usage")));
          if (total !== undefined) {
            builder.usageTotals(total, last);
            if (last !== undefined) {
              const id = JSON.stringify(totals);
              const repeated = id === lastReport?.id;
              if (builder.placeCall(id, last, builder.model) && repeated) reportsLead = true;
              lastReport = { id, usage: last, repeated };
            }
          } else if (info !== undefined) summedUsage = add(summedUsage, usageOf(info));
          else dropLine("token_count event without counts", "it holds no numbers");
          if (info === undefined) continue;
        } else if (eventType === "turn.completed") {
          summedUsage = add(summedUsage, usageOf(recordOf(field(payload, "usage"))));
          dropLine("turn.completed event", own(LEFT_OUT_EVENTS, eventType) ?? "");
          continue;
        } else if (eventType === "turn_aborted") {
          builder.notice(
            id,
            "turnAborted",
            `The turn was stopped (${stringOf(field(payload, "reason")) ?? "no reason given"}).`,
          );
        } else if (eventType === "error") {
          builder.item({ id, type: "failure", message: stringOf(field(payload, "message")) ?? "" });
        } else if (eventType === "thread_name_updated") {
          builder.notice(id, "title", stringOf(field(payload, "thread_name")) ?? "");
        } else {
          dropLine(
            `${eventType} event`,
            own(LEFT_OUT_EVENTS, eventType) ??
              `an event type this importer does not keep (${eventType}); reported so that nothing is lost silently`,
          );
          continue;
        }
        break;
      }
      default: {
        dropLine(
          `${type} line`,
          own(LEFT_OUT_LINES, type) ??
            `a line type this importer does not know (${type}); reported so that nothing is lost silently`,
        );
        continue;
      }
    }
    ledger.importedLine(file, line.line);
  }
  if (summedUsage !== undefined) builder.usageTotals(summedUsage, undefined);
  if (reportsLead && lastReport !== undefined && !lastReport.repeated)
    builder.placeCall(lastReport.id, lastReport.usage, builder.model);
  const built = builder.finishInterrupted(
    CODEX_INTERRUPTED_OUTPUT,
    (call, atEnd) =>
      `The ${call.name} call ${call.id} has no output in the rollout (${atEnd ? "the session stopped while it ran" : "the session went on without it"}): the import added the output Codex gives an interrupted call, "${CODEX_INTERRUPTED_OUTPUT}", marked here as added.`,
  );
  const account = ledger.accounts()[0] ?? { file, lines: 0, imported: 0, leftOut: 0 };
  const hasContent = account.imported > 0;
  return {
    conversations: hasContent
      ? [
          {
            name: packageName(["codex", sessionId]),
            source: "codex",
            sourceId: sessionId,
            file,
            sourceSha256,
            conversation: built.conversation,
            images: built.images,
            ...(built.calls.size === 0 ? {} : { calls: built.calls }),
            ...(built.outsideCalls.length === 0 ? {} : { callsOutsideHistory: built.outsideCalls }),
          },
        ]
      : [],
    leftOut: ledger.leftOut.list(),
    account,
  };
}

/** Response item types written bare, one per line, before the `response_item` envelope. */
const LEGACY_ITEM_TYPES: ReadonlySet<string> = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
]);

/** The first line of the layout before session_meta: `{id, timestamp, instructions?}`, no type. */
function isLegacyHeader(value: JsonRecord): boolean {
  return (
    field(value, "type") === undefined &&
    field(value, "record_type") === undefined &&
    stringOf(field(value, "id")) !== undefined &&
    stringOf(field(value, "timestamp")) !== undefined
  );
}

function add(sum: Usage | undefined, usage: Usage | undefined): Usage | undefined {
  if (usage === undefined) return sum;
  if (sum === undefined) return usage;
  return {
    input: sum.input + usage.input,
    output: sum.output + usage.output,
    cacheRead: sum.cacheRead + usage.cacheRead,
    cacheWrite: 0,
    webSearchRequests: 0,
  };
}
