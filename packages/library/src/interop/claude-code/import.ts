import { basename, dirname } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { sha256Hex } from "../../core/hash.js";
import { ConversationBuilder, type BuiltConversation } from "../conversation-builder.js";
import {
  IMPORTED_NOTICE_KIND,
  packageName,
  type FileImport,
  type ImportedConversation,
} from "../imported.js";
import { arrayOf, compactJson, field, recordOf, stringOf } from "../json-access.js";
import { readJsonLines, type SourceLine } from "../jsonl.js";
import { LeftOutLedger, LineLedger, reportCompaction } from "../report.js";
import { addAssistantContent, addUserContent, CLAUDE_CODE_INTERRUPTED_RESULT } from "./content.js";
import { contentOf, isMessageLine, lineType, sessionIdOf } from "./lines.js";
import { addNoticeLine, leftOutReason } from "./notices.js";
import {
  newestPath,
  otherLeaves,
  pathTo,
  splitThreads,
  type Thread,
  type ThreadPath,
} from "./threads.js";

const BRANCH_REASON =
  "format 1 keeps one history: the branch ending at the newest message was imported, and this message is on another branch (a rewind, an edit or a retry)";

export interface ClaudeCodeFileOptions {
  /** The text of the sub-agent's `.meta.json` beside an `agent-*.jsonl` file. */
  readonly meta?: string;
}

/** The id of a sub-agent file (`agent-<id>.jsonl`), or undefined for a main session file. */
export function agentFileId(file: string): string | undefined {
  return /^agent-(.+)\.jsonl$/.exec(basename(file))?.[1];
}

function sessionIdFor(
  file: string,
  lines: readonly SourceLine[],
  agentId: string | undefined,
): string {
  for (const line of lines) {
    const id = sessionIdOf(line);
    if (id !== undefined && id !== "") return id;
  }
  // <session>/subagents/agent-<id>.jsonl names its session by the folder.
  if (agentId !== undefined && basename(dirname(file)) === "subagents") {
    return basename(dirname(dirname(file)));
  }
  return basename(file).replace(/\.jsonl$/, "");
}

/**
 * Imports one Claude Code session file (docs/interop.md, "claude-code"): the main agent's
 * conversation and one conversation per sub-agent, each line imported or reported left out.
 */
export function importClaudeCodeFile(
  file: string,
  bytes: Uint8Array,
  options: ClaudeCodeFileOptions = {},
): FileImport {
  const sourceSha256 = sha256Hex(bytes);
  const read = readJsonLines(utf8DecodeLenient(bytes));
  const ledger = new LineLedger(new LeftOutLedger());
  ledger.file(file, read.total);
  ledger.unreadableLines(file, read.unreadable);
  const agentId = agentFileId(file);
  const sessionId = sessionIdFor(file, read.lines, agentId);
  const conversations: ImportedConversation[] = [];
  for (const thread of splitThreads(read.lines, agentId)) {
    const imported = importThread(file, thread, sessionId, sourceSha256, ledger, options);
    if (imported !== undefined) conversations.push(imported);
  }
  const account = ledger.accounts()[0] ?? { file, lines: 0, imported: 0, leftOut: 0 };
  return { conversations, leftOut: ledger.leftOut.list(), account };
}

function importThread(
  file: string,
  thread: Thread,
  sessionId: string,
  sourceSha256: string,
  ledger: LineLedger,
  options: ClaudeCodeFileOptions,
): ImportedConversation | undefined {
  if (!thread.lines.some(isMessageLine)) {
    for (const line of thread.lines) {
      ledger.leftOutLine(
        file,
        line.line,
        `${lineType(line)} line`,
        isKeptType(line)
          ? "the file holds no message of this conversation, so there is no conversation to keep it in"
          : leftOutReason(line),
      );
    }
    return undefined;
  }
  const sourceId =
    thread.agentId === undefined ? sessionId : `${sessionId}/agent-${thread.agentId}`;
  const builder = new ConversationBuilder();
  builder.notice(
    "imported",
    IMPORTED_NOTICE_KIND,
    `Imported from Claude Code: ${thread.agentId === undefined ? "session" : "sub-agent of session"} ${sourceId} (${basename(file)}).`,
    compactJson({ source: "claude-code", sourceId, file: basename(file), sha256: sourceSha256 }),
  );
  if (thread.agentId !== undefined && options.meta !== undefined) {
    builder.notice("meta", "subagent", `Sub-agent ${thread.agentId}`, options.meta.trim());
  }
  const path = newestPath(thread);
  const built = buildFromPath(file, thread, path, builder, ledger);
  // Each other branch's history, for targets that keep forks (the gateway store); the archive
  // keeps one history and the ledger above reports their lines.
  const calls = new Map(built.calls);
  const branches = otherLeaves(thread, path).map((leaf) => {
    const scratch = new LineLedger(new LeftOutLedger());
    const branch = buildFromPath(
      file,
      thread,
      pathTo(thread, leaf),
      new ConversationBuilder(),
      scratch,
    );
    for (const [message, call] of branch.calls) calls.set(message, call);
    return branch.conversation.history;
  });
  return {
    name: packageName(
      thread.agentId === undefined
        ? ["claude-code", sessionId]
        : ["claude-code", sessionId, "agent", thread.agentId],
    ),
    source: "claude-code",
    sourceId,
    file,
    sourceSha256,
    conversation: built.conversation,
    images: built.images,
    ...(branches.length === 0 ? {} : { branches }),
    ...(calls.size === 0 ? {} : { calls }),
    ...(built.outsideCalls.length === 0 ? {} : { callsOutsideHistory: built.outsideCalls }),
    ...(thread.agentId === undefined
      ? subagentCallsOf(thread)
      : { parent: { sourceId: sessionId, agentId: thread.agentId } }),
  };
}

/**
 * The sub-agents a main conversation ran: a `Task` (Agent) result line names its sub-agent in
 * `toolUseResult.agentId` (Claude Code 2.x), beside the `tool_use_id` of the call it answers.
 */
function subagentCallsOf(thread: Thread): { subagentCalls?: ReadonlyMap<string, string> } {
  const calls = new Map<string, string>();
  for (const line of thread.lines) {
    if (lineType(line) !== "user") continue;
    const agent = stringOf(field(recordOf(field(line.value, "toolUseResult")), "agentId"));
    if (agent === undefined || calls.has(agent)) continue;
    for (const block of arrayOf(contentOf(line)) ?? []) {
      const record = recordOf(block);
      const callId = stringOf(field(record, "tool_use_id"));
      if (stringOf(field(record, "type")) === "tool_result" && callId !== undefined) {
        calls.set(agent, callId);
        break;
      }
    }
  }
  return calls.size === 0 ? {} : { subagentCalls: calls };
}

/** The conversation along one path: its message lines, and every other line as before. */
function buildFromPath(
  file: string,
  thread: Thread,
  path: ThreadPath,
  builder: ConversationBuilder,
  ledger: LineLedger,
): BuiltConversation {
  for (const line of thread.lines) {
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOut.add(file, what, reason, line.line);
    if (isMessageLine(line)) {
      if (!path.included.has(line)) {
        ledger.leftOutLine(
          file,
          line.line,
          `${lineType(line)} message on another branch`,
          BRANCH_REASON,
        );
        continue;
      }
      ledger.importedLine(file, line.line);
      addMessageLine(line, builder, leaveOut);
      continue;
    }
    const { kept, compaction } = addNoticeLine(line, builder);
    if (!kept) {
      ledger.leftOutLine(file, line.line, `${lineType(line)} line`, leftOutReason(line));
      continue;
    }
    ledger.importedLine(file, line.line);
    if (compaction && path.chain.has(line)) reportCompaction(builder.compacted(), leaveOut);
  }
  return builder.finishInterrupted(
    CLAUDE_CODE_INTERRUPTED_RESULT,
    (call, atEnd) =>
      `The ${call.name} call ${call.id} has no result in the source (${atEnd ? "the session stopped while it ran" : "the session went on without it"}): the import added the result Claude Code gives an interrupted call, "${CLAUDE_CODE_INTERRUPTED_RESULT}", marked here as added.`,
  );
}

function isKeptType(line: SourceLine): boolean {
  return ["summary", "system", "attachment", "custom-title", "ai-title", "agent-name"].includes(
    lineType(line),
  );
}

function addMessageLine(
  line: SourceLine,
  builder: ConversationBuilder,
  leaveOut: (what: string, reason: string) => void,
): void {
  const value = line.value;
  if (lineType(line) === "assistant") {
    if (field(value, "isApiErrorMessage") === true) {
      // Claude Code shows an API error as an assistant message but never sends it back.
      const content = contentOf(line);
      const text = stringOf(content) ?? textOfBlocks(content);
      builder.item({ id: `L${line.line}`, type: "failure", message: text });
      return;
    }
    addAssistantContent(line, builder, leaveOut);
    return;
  }
  if (field(value, "toolUseResult") !== undefined) {
    leaveOut(
      "toolUseResult",
      "Claude Code's structured copy of a tool result for its own display; the result the model got is kept as the tool result",
    );
  }
  const { text, hasImage } = addUserContent(line, builder, leaveOut);
  if (text === undefined && !hasImage) return;
  const id = `L${line.line}`;
  if (field(value, "isCompactSummary") === true) {
    builder.notice(id, "compactionSummary", text ?? "");
  } else if (field(value, "isMeta") === true) {
    builder.notice(id, "meta", text ?? "");
  } else {
    builder.item({ id, type: "user", text: text ?? "", ...(hasImage ? { hasImage } : {}) });
  }
}

function textOfBlocks(content: unknown): string {
  const texts: string[] = [];
  for (const part of arrayOf(content) ?? []) {
    const text = stringOf(field(recordOf(part), "text"));
    if (text !== undefined) texts.push(text);
  }
  return texts.join("\n");
}
