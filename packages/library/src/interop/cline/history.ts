import { ConversationBuilder } from "../conversation-builder.js";
import { arrayOf, field, numberOf, recordOf, stringOf, type JsonRecord } from "../json-access.js";
import type { SourceLine } from "../jsonl.js";
import { reportCompaction, type LineLedger } from "../report.js";
import { addAssistantContent, addUserContent } from "../claude-code/content.js";
import type { ClineRequest, PlacedRequests } from "./requests.js";

/**
 * The API history of a Cline task (`api_conversation_history.json`: Anthropic `MessageParam`s
 * with the extension's own fields) into the builder: each message's content as Claude Code's
 * importer reads Anthropic content (text, images by SHA-256, tool_use, tool_result with
 * is_error, thinking as panel items), the extension's fields reported, Roo Code's condensed
 * summaries as compaction boundaries and its truncated messages kept out of the history.
 */

/** Why each field Cline and its forks add to a message is left out (all removed before sending). */
const MESSAGE_FIELD_REASONS: Readonly<Record<string, string>> = {
  ts: "when the extension saved the message; removed before the request is sent",
  modelInfo:
    "the model that wrote the message (Cline); imported as the model of its request, removed before sending",
  metrics:
    "Cline's copy of the request's tokens and cost; the request's usage and cost are imported from its api_req_started UI message",
  id: "the provider's response id; removed before sending",
  isSummary:
    "Roo Code's condensed-summary mark: imported as a compaction (history from the summary on)",
  condenseId: "Roo Code's condense bookkeeping: imported as a compaction",
  condenseParent:
    "Roo Code's mark of a message a summary replaced: the message is before the summary, kept in the panel only",
  truncationId: "Roo Code's truncation bookkeeping",
  truncationParent:
    "Roo Code's mark of a message its sliding-window truncation hides: kept in the panel only",
  isTruncationMarker:
    "Roo Code's truncation bookkeeping; the marker message itself is sent and imported",
  reasoning_details:
    "provider reasoning material kept for re-sending to that provider: format 1 keeps no provider-signed material (A23)",
  reasoning_content:
    "provider reasoning material kept for re-sending to that provider: format 1 keeps no provider-signed material (A23)",
};

/** Fields of a content block the Anthropic Messages API takes (Cline strips the rest). */
const ANTHROPIC_BLOCK_FIELDS = new Set([
  "type",
  "text",
  "citations",
  "source",
  "id",
  "name",
  "input",
  "tool_use_id",
  "content",
  "is_error",
  "thinking",
  "data",
  "cache_control",
]);

const BLOCK_FIELD_REASON =
  "a field Cline adds to a content block (its convertClineStorageToAnthropicMessage removes it before sending)";

/** The text Cline 3.x sends as the result of a tool call the history never answered. */
export const CLINE_MISSING_RESULT = "result missing";

const RESUMPTION_PREFIX = "[TASK RESUMPTION]";

export interface HistoryContext {
  readonly file: string;
  readonly builder: ConversationBuilder;
  readonly ledger: LineLedger;
  readonly placed: PlacedRequests;
  /** The model of a request whose UI message does not name one (task_metadata.json). */
  readonly modelAt: (request: ClineRequest) => string | undefined;
}

/** Adds the API history's messages, each imported (history or panel) or reported. */
export function addApiHistory(messages: readonly unknown[], context: HistoryContext): void {
  const { builder, ledger, file } = context;
  const records = messages.map(recordOf);
  const lastSummary = records.findLastIndex((record) => field(record, "isSummary") === true);
  const markers = new Set<string>();
  for (const record of records) {
    const id = stringOf(field(record, "truncationId"));
    if (field(record, "isTruncationMarker") === true && id !== undefined) markers.add(id);
  }
  records.forEach((record, index) => {
    const line = index + 1;
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOut.add(file, what, reason, line);
    const role = stringOf(field(record, "role"));
    if (record === undefined || (role !== "user" && role !== "assistant")) {
      const reasoning = stringOf(field(record, "type")) === "reasoning";
      ledger.leftOutLine(
        file,
        line,
        reasoning ? "reasoning item" : `API history entry with role ${role ?? "(none)"}`,
        reasoning
          ? "an OpenAI reasoning item (encrypted) Roo Code keeps to send back: format 1 keeps no provider-signed material (A23)"
          : "not a user or assistant message: kept in the source only",
      );
      return;
    }
    ledger.importedLine(file, line);
    reportFields(record, leaveOut);
    const source: SourceLine = { line, value: { type: role, message: record } };
    const truncated = stringOf(field(record, "truncationParent"));
    if (truncated !== undefined && markers.has(truncated)) {
      // Hidden by the sliding window: in the panel, not in what the extension sends.
      panelOnly(source, role, builder);
      return;
    }
    if (field(record, "isSummary") === true) {
      const results = builder.compacted();
      reportCompaction(results, leaveOut);
      const before = builder.items.length;
      addContent(source, role, builder, leaveOut);
      builder.items.splice(before);
      builder.notice(
        `S${line}`,
        "compactionSummary",
        textOf(field(record, "content")),
        index === lastSummary ? "the history the extension sends starts here" : undefined,
      );
    } else {
      if (role === "user" && resumes(field(record, "content"))) {
        builder.notice(
          `T${line}`,
          "taskResumption",
          "The task was resumed after the extension restarted: the next user message begins with the [TASK RESUMPTION] text the extension adds.",
        );
      }
      addContent(source, role, builder, leaveOut);
    }
    if (role === "assistant") placeUsage(index, record, context);
  });
}

function addContent(
  source: SourceLine,
  role: "user" | "assistant",
  builder: ConversationBuilder,
  leaveOut: (what: string, reason: string) => void,
): void {
  if (role === "assistant") {
    addAssistantContent(source, builder, leaveOut);
    return;
  }
  const { text, hasImage } = addUserContent(source, builder, leaveOut);
  if (text === undefined && !hasImage) return;
  builder.item({
    id: `L${source.line}`,
    type: "user",
    text: text ?? "",
    ...(hasImage ? { hasImage } : {}),
  });
}

/** A message the extension no longer sends: its panel items only (a scratch history). */
function panelOnly(source: SourceLine, role: "user" | "assistant", builder: ConversationBuilder) {
  const scratch = new ConversationBuilder();
  addContent(source, role, scratch, () => undefined);
  for (const item of scratch.items) builder.item(item);
  builder.notice(
    `H${source.line}`,
    "truncated",
    "The message above is hidden by Roo Code's sliding-window truncation: it is not in the history the extension sends.",
  );
}

/** The usage of the requests this assistant message answered, placed on it. */
function placeUsage(index: number, record: JsonRecord, context: HistoryContext): void {
  const messageModel = stringOf(field(recordOf(field(record, "modelInfo")), "modelId"));
  for (const request of context.placed.byAnswer.get(index) ?? []) {
    const model = request.model ?? messageModel ?? context.modelAt(request);
    context.builder.usage(
      `R${request.record}`,
      request.usage,
      model === undefined ? {} : { model },
    );
  }
}

function reportFields(record: JsonRecord, leaveOut: (what: string, reason: string) => void): void {
  for (const key of Object.keys(record)) {
    if (key === "role" || key === "content") continue;
    leaveOut(
      `message field ${key}`,
      MESSAGE_FIELD_REASONS[key] ??
        "a field the extension adds to a message; removed before sending",
    );
  }
  for (const part of arrayOf(field(record, "content")) ?? []) {
    const block = recordOf(part);
    if (block === undefined) continue;
    const type = stringOf(field(block, "type"));
    for (const key of Object.keys(block)) {
      if (ANTHROPIC_BLOCK_FIELDS.has(key) || (key === "signature" && type === "thinking")) continue;
      leaveOut(`${type ?? "(no type)"} block field ${key}`, BLOCK_FIELD_REASON);
    }
  }
}

function resumes(content: unknown): boolean {
  const text = stringOf(content);
  if (text !== undefined) return text.startsWith(RESUMPTION_PREFIX);
  return (arrayOf(content) ?? []).some(
    (part) => stringOf(field(recordOf(part), "text"))?.startsWith(RESUMPTION_PREFIX) === true,
  );
}

function textOf(content: unknown): string {
  const text = stringOf(content);
  if (text !== undefined) return text;
  const texts: string[] = [];
  for (const part of arrayOf(content) ?? []) {
    const value = stringOf(field(recordOf(part), "text"));
    if (value !== undefined) texts.push(value);
  }
  return texts.join("\n\n");
}

/** The time of each API message (Roo Code writes `ts`), for placing requests. */
export function messageTimes(messages: readonly unknown[]): (number | undefined)[] {
  return messages.map((message) => numberOf(field(recordOf(message), "ts")));
}

/**
 * The role of each API message, for placing requests; Roo Code's condensed summary is `summary`:
 * it answers no request (its own call is the UI's `condense_context`), so none is placed on it.
 */
export function messageRoles(messages: readonly unknown[]): (string | undefined)[] {
  return messages.map((message) => {
    const record = recordOf(message);
    return field(record, "isSummary") === true ? "summary" : stringOf(field(record, "role"));
  });
}
