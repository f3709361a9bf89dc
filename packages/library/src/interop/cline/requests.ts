import type { Usage } from "../../format/conversation-schema.js";
import { arrayOf, countOf, field, numberOf, recordOf, stringOf } from "../json-access.js";
import type { LeftOutLedger } from "../report.js";
import type { TaskJson } from "./task-files.js";

/**
 * One model request of a task, from its `api_req_started` UI message: Cline writes the
 * request's usage and cost into that message's text as JSON once the response ends
 * (`{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost}`; Roo Code adds
 * `apiProtocol`, `cancelReason`, `streamingFailedMessage`).
 */
export interface ClineRequest {
  /** The 1-based index of the message in ui_messages.json (the report's record number). */
  readonly record: number;
  readonly ts: number | undefined;
  /** Cline's `conversationHistoryIndex`: the last API history message before the request. */
  readonly historyIndex: number | undefined;
  readonly usage: Usage;
  readonly model: string | undefined;
  readonly provider: string | undefined;
}

const PANEL_COPY =
  "a UI message (what the panel showed, asked or confirmed): the conversation the model saw is imported from api_conversation_history.json";

/** Why each kind of UI message is left out (the rest get PANEL_COPY). */
const UI_REASONS: Readonly<Record<string, string>> = {
  "say:reasoning":
    "reasoning the model streamed, kept for the panel only (Cline keeps signed thinking in the API history, imported from there as thinking items); format 1 has no other place for it",
  "say:checkpoint_created":
    "the extension's workspace checkpoint (a shadow git commit), not conversation",
  "say:api_req_retried": "the extension's note that it retried a request, not conversation",
  "say:error_retry": "the extension's note that it retried a request, not conversation",
  "say:api_req_finished":
    "the end of a request in old Cline versions; its usage is read from api_req_started",
  "say:deleted_api_reqs":
    "usage of requests whose messages the extension deleted; kept in the source only",
};

/** Reads the UI messages: the requests with their usage; every other message is reported. */
export function readUiMessages(ui: TaskJson | undefined, leftOut: LeftOutLedger): ClineRequest[] {
  if (ui === undefined) return [];
  if (ui.reason !== undefined) {
    leftOut.add(ui.file, "ui_messages.json", ui.reason);
    return [];
  }
  const list = arrayOf(ui.value);
  if (list === undefined) {
    leftOut.add(
      ui.file,
      "ui_messages.json",
      "not a JSON array of UI messages: kept in the source only",
    );
    return [];
  }
  const requests: ClineRequest[] = [];
  list.forEach((entry, index) => {
    const record = index + 1;
    const message = recordOf(entry);
    const kind = `${stringOf(field(message, "type")) ?? "(no type)"}:${stringOf(field(message, "say")) ?? stringOf(field(message, "ask")) ?? "(none)"}`;
    if (kind !== "say:api_req_started") {
      leftOut.add(ui.file, `UI message ${kind}`, UI_REASONS[kind] ?? PANEL_COPY, record);
      return;
    }
    const request = requestOf(message, record, ui.file, leftOut);
    if (request !== undefined) requests.push(request);
  });
  return requests;
}

function requestOf(
  message: ReturnType<typeof recordOf>,
  record: number,
  file: string,
  leftOut: LeftOutLedger,
): ClineRequest | undefined {
  let info: ReturnType<typeof recordOf>;
  try {
    info = recordOf(JSON.parse(stringOf(field(message, "text")) ?? ""));
  } catch {
    info = undefined;
  }
  if (info === undefined) {
    leftOut.add(
      file,
      "api_req_started without its JSON",
      "its text is not the JSON of a request: no usage to import",
      record,
    );
    return undefined;
  }
  if (field(info, "request") !== undefined) {
    leftOut.add(
      file,
      "api_req_started request text",
      "the request's new user content as the panel showed it: a copy of the API history's user message, imported from there",
      record,
    );
  }
  for (const key of ["cancelReason", "streamingFailedMessage"]) {
    if (field(info, key) !== undefined) {
      leftOut.add(
        file,
        `api_req_started ${key}`,
        "why the request stopped, for the panel: the usage it reported is imported",
        record,
      );
    }
  }
  if (
    numberOf(field(info, "tokensIn")) === undefined &&
    numberOf(field(info, "tokensOut")) === undefined
  ) {
    leftOut.add(
      file,
      "api_req_started without usage",
      "the request ended before the provider reported usage (cancelled, failed or still running): no usage to import",
      record,
    );
    return undefined;
  }
  const cost = numberOf(field(info, "cost"));
  const modelInfo = recordOf(field(message, "modelInfo"));
  return {
    record,
    ts: numberOf(field(message, "ts")),
    historyIndex: numberOf(field(message, "conversationHistoryIndex")),
    usage: {
      input: countOf(field(info, "tokensIn")),
      output: countOf(field(info, "tokensOut")),
      cacheRead: countOf(field(info, "cacheReads")),
      cacheWrite: countOf(field(info, "cacheWrites")),
      webSearchRequests: 0,
      ...(cost === undefined || cost < 0 ? {} : { reportedCost: cost }),
    },
    model: stringOf(field(modelInfo, "modelId")),
    provider: stringOf(field(modelInfo, "providerId")),
  };
}

/** What the placement of requests found: the requests each assistant message ends. */
export interface PlacedRequests {
  /** By index in the API history of the assistant message the request answered with. */
  readonly byAnswer: ReadonlyMap<number, readonly ClineRequest[]>;
  /** Requests whose answer is not in the history (failed, or condensed or deleted since). */
  readonly unplaced: readonly ClineRequest[];
}

/**
 * Places each request on the assistant message that answered it: by Cline's
 * `conversationHistoryIndex` (the answer is the first assistant message after that index), else
 * by time (Roo Code writes `ts` on API messages: the first assistant message written at or after
 * the request and before the next one). A request neither places counts in the totals only.
 */
export function placeRequests(
  requests: readonly ClineRequest[],
  roles: readonly (string | undefined)[],
  times: readonly (number | undefined)[],
): PlacedRequests {
  const byAnswer = new Map<number, ClineRequest[]>();
  const unplaced: ClineRequest[] = [];
  const taken = new Set<number>();
  requests.forEach((request, index) => {
    const next = requests[index + 1]?.ts;
    let answer: number | undefined;
    if (request.historyIndex !== undefined) {
      for (let at = Math.max(request.historyIndex + 1, 0); at < roles.length; at++) {
        if (roles[at] === "assistant") {
          answer = at;
          break;
        }
      }
    } else if (request.ts !== undefined) {
      for (let at = 0; at < roles.length; at++) {
        const ts = times[at];
        if (roles[at] !== "assistant" || taken.has(at) || ts === undefined) continue;
        if (ts >= request.ts && (next === undefined || ts < next)) {
          answer = at;
          break;
        }
      }
    }
    if (answer === undefined) {
      unplaced.push(request);
      return;
    }
    taken.add(answer);
    const list = byAnswer.get(answer) ?? [];
    list.push(request);
    byAnswer.set(answer, list);
  });
  return { byAnswer, unplaced };
}
