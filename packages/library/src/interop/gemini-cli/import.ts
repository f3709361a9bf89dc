import { basename, dirname } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { sha256Hex } from "../../core/hash.js";
import { nestsTooDeep } from "../../core/json-depth.js";
import type { Message } from "../../history/message.js";
import { ConversationBuilder, type BuiltConversation } from "../conversation-builder.js";
import {
  IMPORTED_NOTICE_KIND,
  packageName,
  type FileImport,
  type ImportedCall,
  type ImportedConversation,
} from "../imported.js";
import { arrayOf, compactJson, field, recordOf, stringOf } from "../json-access.js";
import { NESTED_TOO_DEEP, readJsonLines } from "../jsonl.js";
import { LeftOutLedger, LineLedger } from "../report.js";
import { addCheckpoint } from "./checkpoint.js";
import { addMessage, GEMINI_CANCELLED_RESULT, type MessageState } from "./messages.js";
import {
  replayJsonLines,
  sessionObjectRecords,
  type MessageAt,
  type SessionRecords,
} from "./records.js";

const NO_CONVERSATION =
  "the file holds no user or model message, so there is no conversation to keep it in";

/**
 * Imports one Gemini CLI file (docs/interop/gemini-cli.md): a session (`session-*.jsonl` since
 * 0.39, `session-*.json` before, a sub-agent's `<parent>/<id>.jsonl`) or a `/chat save`
 * checkpoint (`checkpoint-<tag>.json`), each record imported or reported left out.
 */
export function importGeminiCliFile(file: string, bytes: Uint8Array): FileImport {
  const sourceSha256 = sha256Hex(bytes);
  const text = utf8DecodeLenient(bytes);
  const ledger = new LineLedger(new LeftOutLedger());
  const source = { file, sourceSha256, ledger };
  if (!file.endsWith(".jsonl")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) {
      if (nestsTooDeep(parsed)) return wholeFileLeftOut(file, ledger, "file", NESTED_TOO_DEEP);
      const record = recordOf(parsed);
      const history = arrayOf(parsed) ?? arrayOf(field(record, "history"));
      if (history !== undefined) return importCheckpoint(source, history, record);
      if (stringOf(field(record, "sessionId")) !== undefined) {
        const messages = arrayOf(field(record, "messages")) ?? [];
        ledger.file(file, 1 + messages.length);
        return importSession(source, sessionObjectRecords(file, record ?? {}, ledger));
      }
      return wholeFileLeftOut(
        file,
        ledger,
        "file",
        "not a Gemini CLI session (no sessionId) or checkpoint (no list of contents)",
      );
    }
  }
  // A session in lines (a `.json` name that does not parse whole is read this way too).
  const read = readJsonLines(text);
  ledger.file(file, read.total);
  ledger.unreadableLines(file, read.unreadable);
  return importSession(source, replayJsonLines(file, read.lines, ledger));
}

interface Source {
  readonly file: string;
  readonly sourceSha256: string;
  readonly ledger: LineLedger;
}

function importSession(source: Source, records: SessionRecords): FileImport {
  const { file, ledger } = source;
  const { metadata } = records;
  const isConversation = (message: MessageAt): boolean => {
    const type = stringOf(field(message.value, "type"));
    return type === "user" || type === "gemini";
  };
  if (!records.messages.some(isConversation)) {
    for (const record of records.kept) ledger.leftOutLine(file, record, "record", NO_CONVERSATION);
    return result(ledger, file, []);
  }
  const sessionId =
    stringOf(field(metadata, "sessionId")) ?? basename(file).replace(/\.jsonl?$/, "");
  // A sub-agent's session is `chats/<parent session id>/<its id>.jsonl`.
  const parent =
    stringOf(field(metadata, "kind")) === "subagent" && basename(dirname(dirname(file))) === "chats"
      ? basename(dirname(file))
      : undefined;
  const sourceId = parent === undefined ? sessionId : `${parent}/${sessionId}`;
  const builder = new ConversationBuilder();
  stamp(builder, source, sourceId, `${parent === undefined ? "session" : "sub-agent"} ${sourceId}`);
  builder.notice(
    "session",
    "session",
    `Gemini CLI ${stringOf(field(metadata, "kind")) ?? "main"} session ${sessionId} (project ${stringOf(field(metadata, "projectHash")) ?? "unknown"})`,
    compactJson(metadata),
  );
  const summary = stringOf(field(metadata, "summary"));
  if (summary !== undefined) builder.notice("title", "title", summary);
  const state: MessageState = { builder, answered: new Set(), subagentCalls: new Map() };
  const rejected = addMessages(file, records.messages, state, ledger);
  for (const record of records.kept) if (!rejected.has(record)) ledger.importedLine(file, record);
  const built = finish(builder);
  const calls = new Map<Message, ImportedCall>(built.calls);
  const branches = records.branches.map((messages) => {
    const scratch = new ConversationBuilder();
    const scratchLedger = new LineLedger(new LeftOutLedger());
    addMessages(
      file,
      messages,
      { builder: scratch, answered: new Set(), subagentCalls: new Map() },
      scratchLedger,
    );
    const branch = finish(scratch);
    for (const [message, call] of branch.calls) calls.set(message, call);
    return branch.conversation.history;
  });
  const imported: ImportedConversation = {
    name: packageName(
      parent === undefined ? ["gemini-cli", sessionId] : ["gemini-cli", parent, "agent", sessionId],
    ),
    source: "gemini-cli",
    sourceId,
    file,
    sourceSha256: source.sourceSha256,
    conversation: built.conversation,
    images: built.images,
    ...(branches.length === 0 ? {} : { branches }),
    ...(calls.size === 0 ? {} : { calls }),
    ...(built.outsideCalls.length === 0 ? {} : { callsOutsideHistory: built.outsideCalls }),
    ...(parent === undefined
      ? state.subagentCalls.size === 0
        ? {}
        : { subagentCalls: state.subagentCalls }
      : { parent: { sourceId: parent, agentId: sessionId } }),
  };
  return result(ledger, file, [imported]);
}

/** Adds messages in order; returns the records left out as a whole (unknown message types). */
function addMessages(
  file: string,
  messages: readonly MessageAt[],
  state: MessageState,
  ledger: LineLedger,
): Set<number> {
  const rejected = new Set<number>();
  for (const message of messages) {
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOut.add(file, what, reason, message.record);
    if (addMessage(message, state, leaveOut)) continue;
    const what = `message of type ${stringOf(field(message.value, "type")) ?? "(none)"}`;
    const reason =
      "a message type this importer does not know; reported so that nothing is lost silently";
    if (message.shared) leaveOut(what, reason);
    else {
      ledger.leftOutLine(file, message.record, what, reason);
      rejected.add(message.record);
    }
  }
  return rejected;
}

function importCheckpoint(
  source: Source,
  contents: readonly unknown[],
  wrapper: Readonly<Record<string, unknown>> | undefined,
): FileImport {
  const { file, ledger } = source;
  ledger.file(file, contents.length);
  const tag = decodeTag(
    basename(file)
      .replace(/^checkpoint-/, "")
      .replace(/\.json$/, ""),
  );
  const project = basename(dirname(file));
  const sourceId = `${project}/checkpoint-${tag}`;
  const builder = new ConversationBuilder();
  stamp(builder, source, sourceId, `checkpoint "${tag}" (/chat save) of project ${project}`);
  const authType = stringOf(field(wrapper, "authType"));
  if (authType !== undefined)
    builder.notice("checkpoint", "checkpoint", `Saved with authentication ${authType}.`);
  const kept = addCheckpoint(file, contents, builder, ledger);
  const built = finish(builder);
  if (built.conversation.history.length === 0) {
    for (const record of kept) ledger.leftOutLine(file, record, "content", NO_CONVERSATION);
    return result(ledger, file, []);
  }
  for (const record of kept) ledger.importedLine(file, record);
  return result(ledger, file, [
    {
      name: packageName(["gemini-cli", project, "checkpoint", tag]),
      source: "gemini-cli",
      sourceId,
      file,
      sourceSha256: source.sourceSha256,
      conversation: built.conversation,
      images: built.images,
    },
  ]);
}

/** The first item of every imported conversation: where it came from (the import stamp). */
function stamp(builder: ConversationBuilder, source: Source, sourceId: string, what: string) {
  builder.notice(
    "imported",
    IMPORTED_NOTICE_KIND,
    `Imported from Gemini CLI: ${what} (${basename(source.file)}).`,
    compactJson({
      source: "gemini-cli",
      sourceId,
      file: basename(source.file),
      sha256: source.sourceSha256,
    }),
  );
}

/** The conversation, a call without a result given the result Gemini CLI gives a cancelled one. */
function finish(builder: ConversationBuilder): BuiltConversation {
  return builder.finishInterrupted(
    GEMINI_CANCELLED_RESULT,
    (call, atEnd) =>
      `The ${call.name} call ${call.id} has no result in the file (${atEnd ? "the session stopped while it ran" : "the session went on without it"}): the import added the result Gemini CLI records for a cancelled call, "${GEMINI_CANCELLED_RESULT}", marked here as added.`,
  );
}

function decodeTag(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

function wholeFileLeftOut(file: string, ledger: LineLedger, what: string, reason: string) {
  ledger.file(file, 1);
  ledger.leftOutLine(file, 1, what, reason);
  return result(ledger, file, []);
}

function result(
  ledger: LineLedger,
  file: string,
  conversations: readonly ImportedConversation[],
): FileImport {
  const account = ledger.accounts()[0] ?? { file, lines: 0, imported: 0, leftOut: 0 };
  return { conversations, leftOut: ledger.leftOut.list(), account };
}
