import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import { writeImportedPackage, type PackageOutcome } from "./archive-target.js";
import { agentFileId, importClaudeCodeFile } from "./claude-code/import.js";
import { importCodexRollout } from "./codex/import.js";
import type { ConversationSource, FileImport } from "./imported.js";
import { progressCounter, type ImportProgress } from "./progress.js";
import type { FileAccount, LeftOutEntry } from "./report.js";

export type { ImportProgress } from "./progress.js";

/** How each conversation source finds its files in a folder and reads one. */
interface ConversationImporter {
  accept(name: string): boolean;
  importFile(file: string, bytes: Uint8Array): Promise<FileImport>;
}

const importers: Readonly<Record<ConversationSource, ConversationImporter>> = {
  "claude-code": {
    accept: (name) => name.endsWith(".jsonl"),
    async importFile(file, bytes) {
      let meta: string | undefined;
      if (agentFileId(file) !== undefined) {
        meta = await readFile(file.replace(/\.jsonl$/, ".meta.json"), "utf8").catch(
          () => undefined,
        );
      }
      return importClaudeCodeFile(file, bytes, meta === undefined ? {} : { meta });
    },
  },
  codex: {
    accept: (name) => name.endsWith(".jsonl"),
    importFile: async (file, bytes) => importCodexRollout(file, bytes),
  },
};

export function acceptsFile(source: ConversationSource, name: string): boolean {
  return importers[source].accept(name);
}

/** Reads one source file of a conversation source (a sub-agent's `.meta.json` included). */
export async function importConversationFile(
  source: ConversationSource,
  file: string,
  bytes: Uint8Array,
): Promise<FileImport> {
  return importers[source].importFile(file, bytes);
}

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

export interface PackageImportReport {
  readonly source: ConversationSource;
  readonly into: string;
  readonly files: readonly FileAccount[];
  readonly conversations: readonly ConversationOutcome[];
  readonly leftOut: readonly LeftOutEntry[];
  /** Files that could not be read at all. */
  readonly unreadableFiles: readonly { readonly file: string; readonly reason: string }[];
  readonly totals: {
    readonly files: number;
    readonly bytes: number;
    readonly messages: number;
    readonly imported: number;
    readonly updated: number;
    readonly unchanged: number;
    readonly refused: number;
  };
}

/**
 * Imports source files into one format-1 package per conversation under `into`, a few files at
 * a time (memory is bounded by the largest files, not the folder). Every file is fsynced before
 * it is renamed into place; the folders' fsyncs that make the renames durable are done together
 * at the end (FolderSyncBatch), so everything imported is durable when this returns.
 */
export async function importIntoPackages(options: {
  readonly source: ConversationSource;
  readonly files: readonly string[];
  readonly into: string;
  readonly onProgress?: (progress: ImportProgress) => void;
}): Promise<PackageImportReport> {
  const importer = importers[options.source];
  const fileDone = await progressCounter(options.files, options.onProgress);
  const accounts: FileAccount[] = [];
  const conversations: ConversationOutcome[] = [];
  const leftOut: LeftOutEntry[] = [];
  const unreadableFiles: { file: string; reason: string }[] = [];
  let bytes = 0;
  let messages = 0;
  const results: (FileOutcome | undefined)[] = [];
  const writes = new PackageWriteQueue();
  const folderSyncs = new FolderSyncBatch();
  // A few files at a time, so that one file's durable writes (fsync) overlap the next one's
  // reading; memory stays bounded by a few files, never the folder.
  try {
    await eachWithConcurrency(options.files, IMPORT_CONCURRENCY, async (file, index) => {
      const outcome = await importOneFile(importer, file, options.into, writes, folderSyncs);
      results[index] = outcome;
      const fileMessages = outcome.conversations.reduce(
        (sum, conversation) => sum + conversation.messages,
        0,
      );
      bytes += outcome.bytes;
      messages += fileMessages;
      fileDone(outcome.bytes, fileMessages);
    });
  } catch (error) {
    // What was written before the failure is made durable too; the failure is what is reported.
    await folderSyncs.flush().catch(() => undefined);
    throw error;
  }
  await folderSyncs.flush();
  for (const result of results) {
    if (result === undefined) continue;
    if (result.unreadable !== undefined) unreadableFiles.push(result.unreadable);
    if (result.account !== undefined) accounts.push(result.account);
    leftOut.push(...result.leftOut);
    conversations.push(...result.conversations);
  }
  const count = (outcome: PackageOutcome): number =>
    conversations.filter((conversation) => conversation.outcome === outcome).length;
  return {
    source: options.source,
    into: options.into,
    files: accounts,
    conversations,
    leftOut,
    unreadableFiles,
    totals: {
      files: options.files.length,
      bytes,
      messages,
      imported: count("imported"),
      updated: count("updated"),
      unchanged: count("unchanged"),
      refused: count("refused"),
    },
  };
}

/** How many files an import reads and writes at once. */
const IMPORT_CONCURRENCY = 8;

interface FileOutcome {
  readonly bytes: number;
  readonly account?: FileAccount;
  readonly leftOut: readonly LeftOutEntry[];
  readonly conversations: readonly ConversationOutcome[];
  readonly unreadable?: { readonly file: string; readonly reason: string };
}

async function importOneFile(
  importer: ConversationImporter,
  file: string,
  into: string,
  writes: PackageWriteQueue,
  folderSyncs: FolderSyncBatch,
): Promise<FileOutcome> {
  let content: Uint8Array;
  try {
    // One direct read: the thread pool's round trips (open, stat, read, close) cost more than
    // reading a session file that is in the page cache.
    content = readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    return { bytes: 0, leftOut: [], conversations: [], unreadable: { file, reason } };
  }
  const result = await importer.importFile(file, content);
  const conversations: ConversationOutcome[] = [];
  for (const imported of result.conversations) {
    const write = await writes.run(imported.name, () =>
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
  return { bytes: content.length, account: result.account, leftOut: result.leftOut, conversations };
}

/** Writes to one package run one after the other (two files may name the same session). */
class PackageWriteQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(name: string, write: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    const next = previous.then(write, write);
    this.tails.set(
      name,
      next.catch(() => undefined),
    );
    return next;
  }
}

async function eachWithConcurrency<T>(
  list: readonly T[],
  concurrency: number,
  work: (entry: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < list.length) {
      const index = next++;
      await work(list[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
}
