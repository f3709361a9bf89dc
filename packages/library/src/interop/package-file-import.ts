import { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import { utf8DecodeLenient } from "../core/bytes.js";
import { VerbatimError, isVerbatimError } from "../core/errors.js";
import { writeImportedPackage, type PackageOutcome } from "./archive-target.js";
import { agentFileId, importClaudeCodeFile } from "./claude-code/import.js";
import { importClineTask } from "./cline/import.js";
import { importCodexRollout } from "./codex/import.js";
import { importGeminiCliFile } from "./gemini-cli/import.js";
import type { ConversationFileRead } from "./conversation-file-read.js";
import type { ConversationSource, FileImport } from "./imported.js";
import { importOpenCodeDatabase, isOpenCodeDatabase } from "./opencode/database-import.js";
import { importOpenCodeFile } from "./opencode/import.js";
import type { NameLocks } from "./name-locks.js";
import type { FileAccount, LeftOutEntry } from "./report.js";
import { readSourceFile } from "./source-files.js";

/** A sub-agent's `.meta.json` names its type and task: anything larger is not one. */
const SUBAGENT_META_MAX_BYTES = 1024 * 1024;

/** How each conversation source reads one of its files (source-names.ts says which files). */
interface ConversationImporter {
  importFile(file: string, bytes: Uint8Array): Promise<FileImport>;
  /**
   * A file the importer opens itself rather than being given its bytes (OpenCode's SQLite
   * database, read a session at a time): what it read, or why it could not.
   */
  readItself?(file: string): Promise<ConversationFileRead> | undefined;
}

const importers: Readonly<Record<ConversationSource, ConversationImporter>> = {
  "claude-code": {
    async importFile(file, bytes) {
      if (agentFileId(file) === undefined) return importClaudeCodeFile(file, bytes);
      const metaFile = file.replace(/\.jsonl$/, ".meta.json");
      const meta = readSourceFile(metaFile, SUBAGENT_META_MAX_BYTES);
      if (meta.bytes !== undefined)
        return importClaudeCodeFile(file, bytes, { meta: utf8DecodeLenient(meta.bytes) });
      const result = importClaudeCodeFile(file, bytes);
      // A sub-agent without one is common; any other reason is reported.
      if (meta.code === "ENOENT") return result;
      const entry = { file: metaFile, what: "sub-agent .meta.json", count: 0, lines: [] };
      return { ...result, leftOut: [...result.leftOut, { ...entry, reason: meta.reason }] };
    },
  },
  codex: {
    importFile: async (file, bytes) => importCodexRollout(file, bytes),
  },
  "gemini-cli": {
    importFile: async (file, bytes) => importGeminiCliFile(file, bytes),
  },
  cline: {
    importFile: async (file, bytes) => importClineTask(file, bytes),
  },
  opencode: {
    importFile: async (file, bytes) => importOpenCodeFile(file, bytes),
    readItself: (file) => (isOpenCodeDatabase(file) ? importOpenCodeDatabase(file) : undefined),
  },
};

/** Reads one source file of a conversation source (a sub-agent's `.meta.json` included). */
export async function importConversationFile(
  source: ConversationSource,
  file: string,
  bytes: Uint8Array,
): Promise<FileImport> {
  return importers[source].importFile(file, bytes);
}

/**
 * Reads one source file of a conversation source and converts it: its bytes, or, for a file
 * the source's importer opens itself (a database), through the importer.
 */
export async function readConversationFile(
  source: ConversationSource,
  file: string,
): Promise<ConversationFileRead> {
  const opened = importers[source].readItself?.(file);
  if (opened !== undefined) return opened;
  const read = readSourceFile(file);
  if (read.bytes === undefined) return { reason: read.reason };
  return { bytes: read.bytes.length, result: await importers[source].importFile(file, read.bytes) };
}

export type { ConversationFileRead } from "./conversation-file-read.js";

export interface ConversationOutcome {
  readonly name: string;
  readonly sourceId: string;
  readonly file: string;
  readonly path: string;
  readonly outcome: PackageOutcome;
  readonly reason?: string;
  readonly messages: number;
  readonly items: number;
  readonly images: number;
  readonly imagesOmitted: number;
}

/** What importing one source file gave (plain data: it crosses from a worker thread). */
export interface FileOutcome {
  readonly bytes: number;
  readonly account?: FileAccount;
  readonly leftOut: readonly LeftOutEntry[];
  readonly conversations: readonly ConversationOutcome[];
  readonly unreadable?: { readonly file: string; readonly reason: string };
}

/**
 * Imports one source file into its packages under `into`: reads it, converts it and writes
 * each conversation through the archive (under its name's lock). The folders whose fsync makes
 * the writes durable are added to `folderSyncs` (flushed by the caller). A failure of the
 * converter or of a write rejects with an error naming the file (`fileImportError`).
 */
export async function importPackageFile(
  source: ConversationSource,
  file: string,
  into: string,
  locks: NameLocks,
  folderSyncs: FolderSyncBatch,
): Promise<FileOutcome> {
  let read: ConversationFileRead;
  try {
    read = await readConversationFile(source, file);
  } catch (error) {
    throw fileImportError(file, error);
  }
  if (read.result === undefined)
    return { bytes: 0, leftOut: [], conversations: [], unreadable: { file, reason: read.reason } };
  const { result } = read;
  try {
    const conversations: ConversationOutcome[] = [];
    for (const imported of result.conversations) {
      const write = await locks.run(imported.name, () =>
        writeImportedPackage(into, imported, folderSyncs),
      );
      conversations.push({
        name: imported.name,
        sourceId: imported.sourceId,
        file,
        path: write.path,
        outcome: write.outcome,
        ...(write.reason === undefined ? {} : { reason: write.reason }),
        messages: imported.conversation.history.length,
        items: imported.conversation.items.length,
        images: imported.images.size,
        imagesOmitted: write.imagesOmitted,
      });
    }
    return {
      bytes: read.bytes,
      account: result.account,
      leftOut: result.leftOut,
      conversations,
    };
  } catch (error) {
    throw fileImportError(file, error);
  }
}

/** The hint of an import that stopped on a file. */
const STOPPED_HINT =
  "The packages written before it are saved and durable; move the file aside (or fix what the message names) and run the import again: what was imported is skipped";

/**
 * An import's failure on one file, as a VerbatimError naming the file (`where`), keeping the
 * code of a VerbatimError (e.g. a full disk's) and `internal_error` for anything else.
 */
export function fileImportError(file: string, error: unknown): VerbatimError {
  if (isVerbatimError(error) && error.details?.["importedFile"] === file) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = isVerbatimError(error) ? error.code : "internal_error";
  return new VerbatimError(code, `cannot import this file: ${message}`, {
    where: file,
    hint: STOPPED_HINT,
    cause: error,
    details: { importedFile: file },
  });
}
