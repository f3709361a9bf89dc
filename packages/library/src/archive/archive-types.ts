import type { SavedConversation } from "../format/conversation-schema.js";
import type { PackageFileWriter } from "./file-writer.js";
import type { FolderSyncBatch } from "./folder-sync-batch.js";

/** The archive's public types (docs/archive.md, "API"). */

export type PackageKind = "document" | "template" | "designSystem";

/** The keep-conversation setting (A17), on by default. */
export interface ArchiveSettings {
  readonly keepConversation: boolean;
}

export interface OpenArchiveOptions {
  /** Default "document". Templates and design systems never get `agent/` (A4). */
  kind?: PackageKind;
  /** Read at open and at every save (A17). Default: keep the conversation. */
  settings?: () => ArchiveSettings;
  /** The no-undo change hook (A5), fired by `changedWithoutUndo`; never fired by open. */
  onChangedWithoutUndo?: () => void;
  /**
   * Bulk work (an import of many packages): each save leaves the fsync of the folders holding its
   * last renames to this batch, and the caller makes them durable with `flush`
   * (FolderSyncBatch, docs/archive.md "Crash safety"). Default: each save is durable when it
   * returns.
   */
  folderSyncs?: FolderSyncBatch;
  /**
   * The archive is opened for one save (an import): the open does not freeze what it read nor
   * check it against the file, and a save neither freezes its input nor keeps what a next save
   * would reuse (the encoded pieces, the input's references, the file's fingerprint). What is
   * written is the same; a later save is still correct, it compares with the disk instead.
   */
  singleSave?: boolean;
}

/** What the panel shows after opening: one notice for an unreadable saved conversation (A14). */
export interface ArchiveNotice {
  kind: "unreadableConversation";
  /** For people: what happened and what happens next. */
  text: string;
  /** Why the file could not be read (path and what was expected). */
  reason: string;
}

export type SaveOutcome = "unchanged" | "rewritten" | "removed" | "kept" | "skipped";

export interface SaveResult {
  outcome: SaveOutcome;
  bytesWritten: number;
}

export interface ConversationArchive {
  /** Saves the conversation and the bytes of its images (by SHA-256) into the package. */
  save(
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
  ): Promise<SaveResult>;
  /** A turn starts: an unreadable `agent/` kept so far is replaced at the next save (A14). */
  turnStarted(): void;
  /** A new conversation is confirmed: an unreadable `agent/` is deleted at the next save (A14). */
  newConversationConfirmed(): void;
  /** The conversation changed: fires the change hook unless the setting is off (A5, A17). */
  changedWithoutUndo(): void;
  /** True while an unreadable `agent/` is kept byte for byte (A14). */
  readonly preservingUnreadable: boolean;
}

export interface OpenedArchive {
  archive: ConversationArchive;
  /** Empty when there is nothing, it is unreadable, or the setting is off. */
  conversation: SavedConversation;
  /** Verified image bytes by SHA-256 (hex). */
  images: Map<string, Uint8Array>;
  notices: ArchiveNotice[];
}

/** Options for tests and benchmarks: the file writer (crash test) and the budget. */
export interface ArchiveInternals {
  readonly writer?: PackageFileWriter;
  readonly budgetBytes?: number;
  /**
   * From this size of `conversation.json` on, a save keeps no encoded copy of the conversation
   * and encodes it while writing (default STREAMED_SAVE_BYTES, 64 MiB).
   */
  readonly streamedSaveBytes?: number;
}
