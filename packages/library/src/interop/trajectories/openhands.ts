import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import type { TrajectoryItem } from "../../trajectory/items.js";
import type { StoredTurnItem } from "../../trajectory/row.js";
import type { ModelUsage } from "../../trajectory/usage.js";
import { NESTED_TOO_DEEP, readJsonLines } from "../jsonl.js";
import {
  arrayOf,
  compactJson,
  field,
  numberOf,
  recordOf,
  stringOf,
  without,
  type JsonRecord,
} from "../json-access.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "./rows.js";
import { completionUsage, openHandsMetricsUsage } from "./source-usage.js";
import { nestsTooDeep } from "../../core/json-depth.js";

/** Observations that carry no conversation, and why they are left out. */
const LEFT_OUT_OBSERVATIONS: Readonly<Record<string, string>> = {
  agent_state_changed:
    "OpenHands' agent state machine (running, awaiting input, finished), not conversation",
  null: "an empty observation OpenHands records after some actions",
};

const MODEL_RESPONSE_REASON =
  "the raw model completion behind the action: its text and tool call are the imported items, its usage is kept on the first of them";

interface Pending {
  readonly index: number;
  readonly item: TrajectoryItem;
  readonly key: string;
}

interface Entry {
  readonly key: string;
  readonly item: TrajectoryItem;
  usage?: ModelUsage;
}

interface ImportedEvents {
  readonly rows: StoredTurnItem[];
  /** The last `llm_metrics` of the events: OpenHands accumulates them over the run. */
  readonly lastMetrics: JsonRecord | undefined;
}

/** The text of an observation: `content`, else `message`. */
function observationText(event: JsonRecord): string {
  return stringOf(field(event, "content")) ?? stringOf(field(event, "message")) ?? "";
}

/**
 * OpenHands events (an event-stream JSON array, or the `history` of each resolver
 * `output.jsonl` line) as the rows of one job turn per run. Each event is a record; an
 * observation is paired with its action by `cause`, or else with the action just before it.
 * An action whose `source` is the environment (`change_agent_state`) is a notice, never a call
 * the model made. The usage of a model response goes on the first item of the first action it
 * produced (one response may produce several actions).
 */
function importEvents(
  events: readonly unknown[],
  turnId: string,
  ledger: RecordLedger,
  recordBase: number,
): ImportedEvents {
  const entries: Entry[] = [];
  const byActionId = new Map<number, Pending>();
  const environmentActions = new Set<number>();
  const responsesSeen = new Set<string>();
  let lastOpen: Pending | undefined;
  let lastMetrics: JsonRecord | undefined;
  let messages = 0;
  events.forEach((raw, index) => {
    const record = recordBase + index + 1;
    const event = recordOf(raw) ?? {};
    const key = `openhands:${stringOf(field(event, "id")) ?? numberOf(field(event, "id")) ?? index}`;
    const action = stringOf(field(event, "action"));
    const actionArguments = recordOf(field(event, "args")) ?? event;
    const modelResponse = field(recordOf(field(event, "tool_call_metadata")), "model_response");
    if (modelResponse !== undefined) {
      ledger.leftOutPart(record, "model_response", MODEL_RESPONSE_REASON);
    }
    lastMetrics = recordOf(field(event, "llm_metrics")) ?? lastMetrics;
    if (action !== undefined && stringOf(field(event, "source")) === "environment") {
      if (action !== "message" && action !== "system") {
        entries.push({
          key,
          item: {
            type: "notice",
            kind: action === "" ? "action" : action,
            text: stringOf(field(event, "message")) ?? "",
            details: compactJson(without(actionArguments, new Set(["thought"]))),
          },
        });
        const id = numberOf(field(event, "id"));
        if (id !== undefined) environmentActions.add(id);
        ledger.importedRecord();
        return;
      }
    }
    if (action !== undefined) {
      const first = entries.length;
      const responseId = stringOf(field(recordOf(modelResponse), "id"));
      const usage =
        responseId !== undefined && responsesSeen.has(responseId)
          ? undefined
          : completionUsage(recordOf(modelResponse));
      if (responseId !== undefined) responsesSeen.add(responseId);
      const thought = stringOf(field(actionArguments, "thought")) ?? "";
      const callId =
        stringOf(field(recordOf(field(event, "tool_call_metadata")), "tool_call_id")) ??
        `${key}.call`;
      if (action === "message" || action === "system") {
        const text =
          stringOf(field(actionArguments, "content")) ?? stringOf(field(event, "message")) ?? "";
        const source = stringOf(field(event, "source"));
        const images = (
          arrayOf(field(actionArguments, "image_urls")) ??
          arrayOf(field(actionArguments, "images_urls")) ??
          []
        ).filter((url): url is string => typeof url === "string");
        if (action === "system") entries.push({ key, item: { type: "system_message", text } });
        else if (source === "agent" || (source === undefined && messages > 0))
          entries.push({ key, item: { type: "agent_message", text } });
        else
          entries.push({
            key,
            item: {
              type: "user_message",
              text,
              ...(images.length === 0 ? {} : { images: images.map((url) => ({ url })) }),
            },
          });
        messages++;
      } else if (action === "finish") {
        const text =
          stringOf(field(actionArguments, "final_thought")) ??
          (thought === "" ? (stringOf(field(event, "message")) ?? "") : thought);
        entries.push({ key, item: { type: "agent_message", text } });
      } else {
        if (thought !== "")
          entries.push({ key: `${key}.thought`, item: { type: "agent_message", text: thought } });
        const item: TrajectoryItem =
          action === "run"
            ? {
                type: "command_execution",
                call_id: callId,
                command: [stringOf(field(actionArguments, "command")) ?? ""],
                status: "in_progress",
                output: "",
                exit_code: null,
                execution_mechanism: "local_dynamic",
              }
            : {
                type: "tool_call",
                call_id: callId,
                name:
                  stringOf(field(recordOf(field(event, "tool_call_metadata")), "function_name")) ??
                  action,
                arguments: compactJson(without(actionArguments, new Set(["thought"]))),
                execution_mechanism: "local_dynamic",
              };
        const pending = { index: entries.length, item, key };
        entries.push({ key, item });
        const id = numberOf(field(event, "id"));
        if (id !== undefined) byActionId.set(id, pending);
        lastOpen = pending;
      }
      const firstEntry = entries[first];
      if (usage !== undefined && firstEntry !== undefined) firstEntry.usage = usage;
      ledger.importedRecord();
      return;
    }
    const observation = stringOf(field(event, "observation")) ?? "(none)";
    const leftOut = Object.hasOwn(LEFT_OUT_OBSERVATIONS, observation)
      ? LEFT_OUT_OBSERVATIONS[observation]
      : undefined;
    if (leftOut !== undefined) {
      ledger.leftOutRecord(record, `${observation} observation`, leftOut);
      return;
    }
    const cause = numberOf(field(event, "cause"));
    if (cause !== undefined && environmentActions.has(cause)) {
      ledger.leftOutRecord(
        record,
        `${observation} observation of an environment action`,
        "the environment's own action is kept as a notice; what it observed is no tool result",
      );
      return;
    }
    const pending = cause !== undefined ? byActionId.get(cause) : lastOpen;
    lastOpen = undefined;
    const text = observationText(event);
    if (pending === undefined) {
      if (observation === "error") entries.push({ key, item: { type: "error", message: text } });
      else {
        ledger.leftOutRecord(
          record,
          `${observation} observation without its action`,
          "no action in the run caused it, so no tool call can hold its output",
        );
        return;
      }
    } else if (pending.item.type === "command_execution") {
      const extras = recordOf(field(event, "extras"));
      const exit =
        numberOf(field(event, "exit_code")) ??
        numberOf(field(recordOf(field(extras, "metadata")), "exit_code")) ??
        numberOf(field(extras, "exit_code"));
      entries[pending.index] = {
        ...entries[pending.index],
        key: pending.key,
        item: {
          ...pending.item,
          status: observation === "error" ? "failed" : "completed",
          output: text,
          exit_code: exit === undefined || !Number.isInteger(exit) ? null : exit,
        },
      };
    } else if (pending.item.type === "tool_call") {
      entries.push({
        key,
        item: {
          type: "tool_result",
          call_id: pending.item.call_id,
          name: pending.item.name,
          output: text,
          is_error: observation === "error",
          execution_mechanism: "local_dynamic",
        },
      });
    }
    ledger.importedRecord();
  });
  const rows = new TurnRowsBuilder(turnId);
  for (const entry of entries) rows.add(entry.key, entry.item, entry.usage);
  return { rows: [...rows.rows], lastMetrics };
}

function totalsOf(metrics: JsonRecord | undefined): ModelUsage[] | undefined {
  const usage = openHandsMetricsUsage(metrics);
  return usage === undefined ? undefined : [usage];
}

/** An OpenHands event-stream file (a JSON array of events). */
export function importOpenHandsEvents(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8DecodeLenient(bytes));
  } catch (error) {
    ledger.leftOutRecord(0, "file", `not JSON: ${(error as Error).message}`);
    return ledger.result([]);
  }
  if (nestsTooDeep(parsed)) {
    ledger.leftOutRecord(0, "file", NESTED_TOO_DEEP);
    return ledger.result([]);
  }
  const events = arrayOf(parsed) ?? arrayOf(field(recordOf(parsed), "history"));
  if (events === undefined) {
    ledger.leftOutRecord(
      0,
      "file",
      "not an OpenHands event stream: it is neither an array of events nor has a history array",
    );
    return ledger.result([]);
  }
  const turnId = `openhands:${basename(file).replace(/\.json$/, "")}`;
  const imported = importEvents(events, turnId, ledger, 0);
  const totals = totalsOf(imported.lastMetrics);
  return ledger.result(
    imported.rows,
    totals === undefined ? undefined : new Map([[turnId, totals]]),
  );
}

const RESOLVER_REASON =
  "resolver run facts (issue, instruction, patch, success, explanation): job-level facts, not turn items";

/** An OpenHands resolver `output.jsonl`: one job turn per line (issue), its `history` events. */
export function importOpenHandsResolver(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
  const read = readJsonLines(utf8DecodeLenient(bytes));
  ledger.unreadableRecords(read.unreadable);
  const rows: StoredTurnItem[] = [];
  const jobUsage = new Map<string, ModelUsage[]>();
  let recordBase = 0;
  for (const line of read.lines) {
    const issue = recordOf(field(line.value, "issue"));
    const turnId = `openhands:${stringOf(field(issue, "owner")) ?? ""}/${stringOf(field(issue, "repo")) ?? ""}#${numberOf(field(issue, "number")) ?? line.line}`;
    const events = arrayOf(field(line.value, "history")) ?? [];
    const imported = importEvents(events, turnId, ledger, recordBase);
    rows.push(...imported.rows);
    // The line's metrics are the run's final totals; the events' are running totals.
    const lineTotals = totalsOf(recordOf(field(line.value, "metrics")));
    const totals = lineTotals ?? totalsOf(imported.lastMetrics);
    if (totals !== undefined) jobUsage.set(turnId, totals);
    recordBase += events.length;
    for (const key of Object.keys(line.value))
      if (key !== "history" && !(key === "metrics" && lineTotals !== undefined))
        ledger.leftOutPart(line.line, key, RESOLVER_REASON);
  }
  return ledger.result(rows, jobUsage);
}
