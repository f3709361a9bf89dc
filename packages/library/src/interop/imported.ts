import type { SavedConversation } from "../format/conversation-schema.js";
import type { Message } from "../history/message.js";
import type { FileAccount, LeftOutEntry } from "./report.js";

/** The sources verbatim imports (docs/interop.md). */
export const CONVERSATION_SOURCES = ["claude-code", "codex"] as const;
export type ConversationSource = (typeof CONVERSATION_SOURCES)[number];

/** One conversation read from another tool's files, ready to be saved as a format-1 package. */
export interface ImportedConversation {
  /** The package folder name: the source and its own ids, e.g. `claude-code-<session id>`. */
  readonly name: string;
  readonly source: ConversationSource;
  /** The source's own id of the conversation (session id, `<session>/agent-<id>`). */
  readonly sourceId: string;
  /** The file it came from, as given. */
  readonly file: string;
  /** SHA-256 of the source file's bytes: a re-run with the same bytes changes nothing. */
  readonly sourceSha256: string;
  readonly conversation: SavedConversation;
  readonly images: ReadonlyMap<string, Uint8Array>;
  /**
   * The histories of the source's other branches (a rewind, an edit, a retry), each from its
   * root: kept as forks by targets that have them (the gateway store); a package keeps one.
   */
  readonly branches?: readonly (readonly Message[])[];
  /** A sub-agent's conversation: the source id of the session it ran in, and its agent id. */
  readonly parent?: { readonly sourceId: string; readonly agentId: string };
  /** A main conversation's sub-agents: agent id → the id of the tool call that ran it. */
  readonly subagentCalls?: ReadonlyMap<string, string>;
}

/** What one source file gave: its conversations, what was left out, and the line account. */
export interface FileImport {
  readonly conversations: readonly ImportedConversation[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly account: FileAccount;
}

/** The notice kind of the first item of every imported conversation. */
export const IMPORTED_NOTICE_KIND = "imported";

/** A package folder name from a source and its ids: letters, digits, `.`, `_` and `-` only. */
export function packageName(parts: readonly string[]): string {
  return parts.map((part) => part.replace(/[^A-Za-z0-9._-]/g, "_")).join("-");
}
