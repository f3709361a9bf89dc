import type { ConversationBuilder } from "../conversation-builder.js";
import { compactJson, field, numberOf, recordOf, stringOf, without } from "../json-access.js";
import type { SourceLine } from "../jsonl.js";
import { lineType } from "./lines.js";

/** Fields every line repeats (where and when it was written): not repeated in a notice. */
const ENVELOPE = new Set([
  "type",
  "subtype",
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "isSidechain",
  "userType",
  "cwd",
  "sessionId",
  "session_id",
  "version",
  "gitBranch",
  "slug",
  "entrypoint",
  "timestamp",
  "isMeta",
  "level",
  "agentId",
]);

/** Line types that are not part of the conversation, and why each is left out. */
export const LEFT_OUT_LINE_TYPES: Readonly<Record<string, string>> = {
  progress:
    "live output of a running command or sub-agent (bash_progress, agent_progress): copies of the tool's final result and of the sub-agent's own conversation, which are kept",
  "file-history-snapshot":
    "Claude Code's backups of edited files for its own undo, not conversation",
  "queue-operation":
    "Claude Code's input-queue bookkeeping; a queued prompt is kept as a user message once sent",
  "last-prompt": "a copy of the last prompt, which is kept as a user message",
  "worktree-state": "Claude Code's git worktree state, not conversation",
  relocated: "Claude Code's record of a moved working folder, not conversation",
  "bridge-session": "Claude Code's remote-session bookkeeping, not conversation",
  "atis-latch": "Claude Code's internal state, not conversation",
  started:
    "Claude Code's background-agent bookkeeping; the agent's conversation is in its own file",
  result: "Claude Code's background-agent bookkeeping; the agent's conversation is in its own file",
  "cost-state": "Claude Code's cost counter; usage is summed from the assistant messages",
  "api-request-shape": "a copy of the request shape; the messages themselves are imported",
  "api-request-blob": "a copy of request messages by hash; the messages themselves are imported",
  "api-request": "request parameters of Claude Code, not conversation",
};

/** Line types kept as panel notices: `[kind, text of the notice]`. */
function noticeOf(line: SourceLine): { kind: string; text: string; detail: unknown } | undefined {
  const value = line.value;
  const type = lineType(line);
  const subtype = stringOf(field(value, "subtype"));
  const rest = without(value, ENVELOPE);
  switch (type) {
    case "summary":
      return { kind: "summary", text: stringOf(field(value, "summary")) ?? "", detail: rest };
    case "custom-title":
    case "ai-title":
    case "agent-name":
      return {
        kind: "title",
        text:
          stringOf(field(value, "customTitle")) ??
          stringOf(field(value, "aiTitle")) ??
          stringOf(field(value, "agentName")) ??
          "",
        detail: rest,
      };
    case "permission-mode":
    case "mode":
      return {
        kind: "permissionMode",
        text: stringOf(field(value, "permissionMode")) ?? stringOf(field(value, "mode")) ?? "",
        detail: rest,
      };
    case "pr-link":
    case "frame-link":
      return {
        kind: "link",
        text: stringOf(field(value, "prUrl")) ?? stringOf(field(value, "frameUrl")) ?? "",
        detail: rest,
      };
    case "progress": {
      // Hook runs are kept; a command's streamed output and a sub-agent's messages are copies
      // of the tool's final result and of the sub-agent's own conversation (left out, reported).
      const data = recordOf(field(value, "data"));
      const kind = stringOf(field(data, "type")) ?? "progress";
      if (kind === "bash_progress" || kind === "agent_progress") return undefined;
      const hook = stringOf(field(data, "hookName"));
      return {
        kind: kind === "hook_progress" ? "hook" : "progress",
        text: `${kind}${hook === undefined ? "" : `: ${hook}`}`,
        detail: data ?? rest,
      };
    }
    case "attachment": {
      const attachment = recordOf(field(value, "attachment"));
      return {
        kind: "attachment",
        text: stringOf(field(attachment, "type")) ?? "attachment",
        detail: attachment ?? rest,
      };
    }
    case "system": {
      if (subtype === "compact_boundary") {
        const meta = recordOf(field(value, "compactMetadata"));
        const trigger = stringOf(field(meta, "trigger")) ?? stringOf(field(value, "trigger")) ?? "";
        const tokens = numberOf(field(meta, "preTokens"));
        return {
          kind: "compacted",
          text: `The conversation was compacted${trigger === "" ? "" : ` (${trigger})`}${tokens === undefined ? "" : ` at ${tokens} tokens`}: the history starts again from its summary.`,
          detail: rest,
        };
      }
      const text = stringOf(field(value, "content")) ?? subtype ?? "system";
      const kind = subtype !== undefined && /hook/.test(subtype) ? "hook" : "system";
      return { kind, text: `${subtype ?? "system"}: ${text}`, detail: rest };
    }
    default:
      return undefined;
  }
}

/**
 * A line that is not a message: a notice item (id `L<line>`), or false when its type is left
 * out (the caller reports why). True when the line was a compaction boundary.
 */
export function addNoticeLine(
  line: SourceLine,
  builder: ConversationBuilder,
): { kept: boolean; compaction: boolean } {
  const notice = noticeOf(line);
  if (notice === undefined) return { kept: false, compaction: false };
  builder.notice(`L${line.line}`, notice.kind, notice.text, compactJson(notice.detail));
  return { kept: true, compaction: notice.kind === "compacted" };
}

export function leftOutReason(line: SourceLine): string {
  const type = lineType(line);
  return Object.hasOwn(LEFT_OUT_LINE_TYPES, type)
    ? (LEFT_OUT_LINE_TYPES[type] ?? "")
    : `a line type this importer does not know (${type}); reported so that nothing is lost silently`;
}
