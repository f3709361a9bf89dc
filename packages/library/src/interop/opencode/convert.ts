import { basename } from "node:path";
import type { SavedConversation } from "../../format/conversation-schema.js";
import type { Block } from "../../history/message.js";
import { ConversationBuilder } from "../conversation-builder.js";
import {
  IMPORTED_NOTICE_KIND,
  packageName,
  type ImportedCall,
  type ImportedConversation,
} from "../imported.js";
import {
  compactJson,
  field,
  recordOf,
  stringOf,
  without,
  type JsonRecord,
} from "../json-access.js";
import { reportCompaction, type LeftOutLedger } from "../report.js";
import {
  attachmentBlocks,
  COMPACTION_PROMPT,
  errorText,
  fileBlock,
  LEFT_OUT_PARTS,
  usageOf,
  type LeaveOut,
} from "./parts.js";
import type { OpenCodeMessage, OpenCodeSession } from "./session.js";

/** The result OpenCode gives the model for a call that never finished (toModelMessages). */
export const OPENCODE_INTERRUPTED_OUTPUT = "[Tool execution was interrupted]";

/** Where a session came from, and where its records' left-out facts go. */
export interface SessionContext {
  readonly file: string;
  readonly sourceSha256: string;
  readonly ledger: LeftOutLedger;
  /** The number of the session's first record in the file (1 for a file of one session). */
  readonly firstRecord: number;
}

/** A converted session: its conversation (none when it holds nothing) and its record account. */
export interface ConvertedSession {
  readonly conversation: ImportedConversation | undefined;
  readonly records: number;
  readonly leftOutRecords: number;
}

/** Reads one session's records in order, counting each as imported or left out whole. */
class RecordCursor {
  record: number;
  leftOut = 0;
  private dropped = false;
  constructor(
    private readonly context: SessionContext,
    first: number,
  ) {
    this.record = first - 1;
  }
  next(): void {
    this.record++;
    this.dropped = false;
  }
  /** A fact about the current record, which is still (partly) imported. */
  note: LeaveOut = (what, reason) =>
    this.context.ledger.add(this.context.file, what, reason, this.record);
  /** The current record is left out as a whole. */
  drop: LeaveOut = (what, reason) => {
    this.note(what, reason);
    if (!this.dropped) this.leftOut++;
    this.dropped = true;
  };
}

/**
 * Converts one OpenCode session (docs/interop/opencode.md, "Field table") into one conversation:
 * every record imported or reported left out.
 */
export function convertSession(
  session: OpenCodeSession,
  context: SessionContext,
): ConvertedSession {
  const cursor = new RecordCursor(context, context.firstRecord);
  const sessionId = stringOf(field(session.info, "id")) ?? "";
  const builder = new ConversationBuilder();
  builder.notice(
    "imported",
    IMPORTED_NOTICE_KIND,
    `Imported from OpenCode: session ${sessionId} (${basename(context.file)}).`,
    compactJson({
      source: "opencode",
      sourceId: sessionId,
      file: basename(context.file),
      sha256: context.sourceSha256,
    }),
  );
  cursor.next();
  const title = stringOf(field(session.info, "title"));
  builder.notice(
    "session",
    "session",
    `OpenCode ${stringOf(field(session.info, "version")) ?? ""} session ${sessionId}${title === undefined ? "" : `: ${title}`}`,
    compactJson(session.info),
  );
  const subagentCalls = new Map<string, string>();
  let system: string | undefined;
  for (const message of session.messages) {
    cursor.next();
    const role = stringOf(field(message.info, "role"));
    if (role === "user") addUser(message, builder, cursor);
    else if (role === "assistant") {
      const instructions = systemOf(message.info);
      if (instructions !== undefined && instructions !== system) {
        builder.notice(
          `${stringOf(field(message.info, "id")) ?? cursor.record}.system`,
          "instructions",
          instructions,
        );
        system = instructions;
      }
      addAssistant(message, builder, cursor, subagentCalls);
    } else {
      cursor.drop(
        `message with role ${role ?? "(none)"}`,
        "OpenCode messages are user or assistant; reported so that nothing is lost silently",
      );
      for (const _part of message.parts) {
        cursor.next();
        cursor.drop("part of a message with an unknown role", "its message was left out");
      }
    }
  }
  const built = builder.finishInterrupted(
    OPENCODE_INTERRUPTED_OUTPUT,
    (call, atEnd) =>
      `The ${call.name} call ${call.id} has no result in the session (${atEnd ? "the session stopped while it ran" : "the session went on without it"}): the import added the result OpenCode gives the model for such a call, "${OPENCODE_INTERRUPTED_OUTPUT}", marked here as added.`,
  );
  const records = cursor.record - context.firstRecord + 1;
  if (built.conversation.history.length === 0 && session.messages.length === 0)
    return { conversation: undefined, records, leftOutRecords: cursor.leftOut };
  const parentId = stringOf(field(session.info, "parentID"));
  return {
    conversation: {
      name: packageName(["opencode", sessionId]),
      source: "opencode",
      sourceId: sessionId,
      file: context.file,
      sourceSha256: context.sourceSha256,
      conversation: withReportedCost(built.conversation, [
        ...built.calls.values(),
        ...built.outsideCalls,
      ]),
      images: built.images,
      ...(built.calls.size === 0 ? {} : { calls: built.calls }),
      ...(built.outsideCalls.length === 0 ? {} : { callsOutsideHistory: built.outsideCalls }),
      ...(parentId === undefined ? {} : { parent: { sourceId: parentId, agentId: sessionId } }),
      ...(subagentCalls.size === 0 ? {} : { subagentCalls }),
    },
    records,
    leftOutRecords: cursor.leftOut,
  };
}

/** The system prompt of an assistant message (kept by OpenCode 0.x), as one text. */
function systemOf(info: JsonRecord): string | undefined {
  const system = field(info, "system");
  if (typeof system === "string") return system;
  return Array.isArray(system) && system.every((entry) => typeof entry === "string")
    ? system.join("\n\n")
    : undefined;
}

/** The conversation's totals with the cost OpenCode reported, when every call reported one. */
function withReportedCost(
  conversation: SavedConversation,
  calls: readonly ImportedCall[],
): SavedConversation {
  if (calls.length === 0 || calls.some((call) => call.usage.reportedCost === undefined))
    return conversation;
  const dollars = calls.reduce((sum, call) => sum + (call.usage.reportedCost ?? 0), 0);
  return {
    ...conversation,
    usage: { ...conversation.usage, reportedCost: dollars },
    estimatedCost: { kind: "reported", dollars },
  };
}

function addUser(message: OpenCodeMessage, builder: ConversationBuilder, cursor: RecordCursor) {
  const blocks: Block[] = [];
  const summary = recordOf(field(message.info, "summary"));
  if (summary !== undefined)
    cursor.note(
      "user message summary",
      "OpenCode's own title, body and file diffs of the turn, shown in its UI; not conversation",
    );
  for (const part of message.parts) {
    cursor.next();
    const type = stringOf(field(part, "type")) ?? "(no type)";
    const partId = stringOf(field(part, "id")) ?? `R${cursor.record}`;
    if (type === "text") {
      const text = stringOf(field(part, "text")) ?? "";
      if (field(part, "ignored") === true) {
        cursor.drop(
          "ignored text part",
          "OpenCode marks it ignored and does not send it to the model",
        );
        continue;
      }
      blocks.push({ type: "text", text });
      builder.item({ id: partId, type: "user", text });
    } else if (type === "file") {
      const block = fileBlock(part, builder, cursor.drop);
      if (block === undefined) continue;
      blocks.push(block);
      builder.item({ id: partId, type: "user", text: "", hasImage: true });
    } else if (type === "compaction") {
      builder.notice(
        partId,
        "compacted",
        `The conversation was compacted (${field(part, "auto") === true ? "automatically" : "on request"}): the history starts again from OpenCode's summary request ("${COMPACTION_PROMPT}").`,
      );
      reportCompaction(builder.compacted(), cursor.note);
      blocks.push({ type: "text", text: COMPACTION_PROMPT });
    } else if (type === "subtask") {
      builder.notice(
        partId,
        "subtask",
        `A subtask for agent ${stringOf(field(part, "agent")) ?? ""}: ${stringOf(field(part, "description")) ?? ""}`,
        compactJson(without(part, new Set(["id", "sessionID", "messageID"]))),
      );
    } else {
      const reason = Object.hasOwn(LEFT_OUT_PARTS, type) ? LEFT_OUT_PARTS[type] : undefined;
      cursor.drop(
        `${type} part`,
        reason ??
          `a part type this importer does not keep in a user message (${type}); reported so that nothing is lost silently`,
      );
    }
  }
  builder.user(blocks);
}

function addAssistant(
  message: OpenCodeMessage,
  builder: ConversationBuilder,
  cursor: RecordCursor,
  subagentCalls: Map<string, string>,
) {
  const messageId = stringOf(field(message.info, "id")) ?? `R${cursor.record}`;
  const model = stringOf(field(message.info, "modelID"));
  const provider = stringOf(field(message.info, "providerID"));
  if (model !== undefined) builder.model = model;
  if (provider !== undefined) builder.provider = provider;
  const call = model === undefined ? {} : { model };
  const error = field(message.info, "error");
  let step = 0;
  let steps = 0;
  let key = `${messageId}#0`;
  for (const part of message.parts) {
    cursor.next();
    const type = stringOf(field(part, "type")) ?? "(no type)";
    const partId = stringOf(field(part, "id")) ?? `R${cursor.record}`;
    switch (type) {
      case "step-start":
        step++;
        key = `${messageId}#${step}`;
        cursor.drop("step-start part", LEFT_OUT_PARTS["step-start"] ?? "");
        break;
      case "step-finish": {
        steps++;
        const usage = usageOf(part);
        if (usage === undefined)
          cursor.drop("step-finish part without tokens", "it holds no counts");
        else builder.usage(`${key}:finish`, usage, call);
        break;
      }
      case "text": {
        const text = stringOf(field(part, "text")) ?? "";
        if (text === "") {
          cursor.drop("empty text part", "it holds no text");
          break;
        }
        builder.assistant(key, [{ type: "text", text }]);
        builder.item({ id: partId, type: "assistant", text });
        break;
      }
      case "reasoning":
        builder.item({ id: partId, type: "thinking", text: stringOf(field(part, "text")) ?? "" });
        break;
      case "tool":
        addTool(part, partId, key, builder, cursor, subagentCalls);
        break;
      case "file": {
        const block = fileBlock(part, builder, cursor.drop);
        if (block !== undefined) builder.assistant(key, [block]);
        break;
      }
      case "retry": {
        const attempt = field(part, "attempt");
        builder.item({
          id: partId,
          type: "failure",
          message: `Attempt ${typeof attempt === "number" ? attempt : "?"} failed and OpenCode retried: ${errorText(field(part, "error"))}`,
        });
        break;
      }
      default: {
        const reason = Object.hasOwn(LEFT_OUT_PARTS, type) ? LEFT_OUT_PARTS[type] : undefined;
        cursor.drop(
          `${type} part`,
          reason ??
            `a part type this importer does not keep in an assistant message (${type}); reported so that nothing is lost silently`,
        );
      }
    }
  }
  // A message without step-finish parts (or with counts only on the message) reports its usage
  // on its info; with them, the info's counts are their sum.
  const usage = usageOf(message.info);
  if (steps === 0 && usage !== undefined) builder.usage(`${messageId}:message`, usage, call);
  if (error !== undefined)
    builder.item({ id: `${messageId}.error`, type: "failure", message: errorText(error) });
}

function addTool(
  part: JsonRecord,
  partId: string,
  key: string,
  builder: ConversationBuilder,
  cursor: RecordCursor,
  subagentCalls: Map<string, string>,
) {
  const state = recordOf(field(part, "state"));
  const status = stringOf(field(state, "status")) ?? "pending";
  const callID = stringOf(field(part, "callID")) ?? `call_imported_${partId}`;
  if (stringOf(field(part, "callID")) === undefined)
    cursor.note(
      "tool part callID",
      "missing in the source; the import named the call call_imported_<part id>",
    );
  const name = stringOf(field(part, "tool")) ?? "";
  const input = field(state, "input") ?? {};
  builder.assistant(key, [{ type: "toolCall", id: callID, name, arguments: compactJson(input) }]);
  const title = stringOf(field(state, "title"));
  builder.item({
    id: partId,
    type: "tool",
    name,
    status: "running",
    callID,
    detail: compactJson(input),
    ...(title === undefined || title === "" ? {} : { summary: title }),
  });
  const metadata = recordOf(field(state, "metadata"));
  const child = stringOf(field(metadata, "sessionId")) ?? stringOf(field(metadata, "sessionID"));
  if (child !== undefined) subagentCalls.set(child, callID);
  if (status === "completed") {
    const output = stringOf(field(state, "output")) ?? compactJson(field(state, "output") ?? "");
    builder.toolResult(
      { type: "toolResult", callID, toolName: name, isError: false, content: output },
      attachmentBlocks(state, builder, cursor.note),
    );
  } else if (status === "error") {
    const interrupted =
      field(metadata, "interrupted") === true ? stringOf(field(metadata, "output")) : undefined;
    builder.toolResult({
      type: "toolResult",
      callID,
      toolName: name,
      isError: interrupted === undefined,
      content: interrupted ?? stringOf(field(state, "error")) ?? errorText(field(state, "error")),
    });
  }
  // pending and running calls get OpenCode's interrupted result at the end (convertSession).
}
