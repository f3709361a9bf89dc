import type { SavedConversation, Usage } from "../format/conversation-schema.js";
import { sha256Hex } from "../core/hash.js";
import type { Message } from "../history/message.js";
import type { FileAccount, LeftOutEntry } from "./report.js";

/** The sources verbatim imports (docs/interop.md). */
export const CONVERSATION_SOURCES = [
  "claude-code",
  "codex",
  "opencode",
  "gemini-cli",
  "cline",
] as const;
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
  /**
   * The model calls the source reports usage for, by the assistant message (of `history` or of
   * a branch) that ends each: kept on that message by targets that keep it per message (the
   * gateway store); a package keeps the conversation's totals.
   */
  readonly calls?: ReadonlyMap<Message, ImportedCall>;
  /**
   * The model calls the source reports usage for that end no message of `history` (their
   * answers were compacted or condensed away, or the source never kept them): a package counts
   * them in its totals; the gateway store keeps them on the history's first message.
   */
  readonly callsOutsideHistory?: readonly ImportedCall[];
}

/** One model call of an imported conversation: its usage, and the model that answered. */
export interface ImportedCall {
  readonly usage: Usage;
  readonly model?: string;
  readonly provider?: string;
}

/** What one source file gave: its conversations, what was left out, and the line account. */
export interface FileImport {
  readonly conversations: readonly ImportedConversation[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly account: FileAccount;
}

/** The notice kind of the first item of every imported conversation. */
export const IMPORTED_NOTICE_KIND = "imported";

/**
 * The longest package folder name: file systems refuse names over 255 bytes (ENAMETOOLONG).
 * Every name up to it keeps the form earlier versions gave it, so their packages are found.
 */
export const PACKAGE_NAME_MAX = 255;

/**
 * A package folder name from a source and its ids: letters, digits, `.`, `_` and `-` only. A
 * name over PACKAGE_NAME_MAX is cut and ends with a hash of the whole ids, so each re-run finds
 * the same package; the full id stays in the package's import stamp.
 */
export function packageName(parts: readonly string[]): string {
  const name = parts.map((part) => part.replace(/[^A-Za-z0-9._-]/g, "_")).join("-");
  if (name.length <= PACKAGE_NAME_MAX) return name;
  const hash = sha256Hex(parts.join("\u0000")).slice(0, 16);
  return `${name.slice(0, PACKAGE_NAME_MAX - hash.length - 1)}-${hash}`;
}
