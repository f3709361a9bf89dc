import { stat } from "node:fs/promises";
import { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import type { PackageOutcome } from "./archive-target.js";
import type { ConversationSource } from "./imported.js";
import type { ConversationOutcome, FileOutcome } from "./package-file-import.js";
import { importWithThreads } from "./parallel-import.js";
import { progressCounter, type ImportProgress } from "./progress.js";
import type { FileAccount, LeftOutEntry } from "./report.js";
import { defaultImportJobs } from "./source-names.js";

export type { ImportProgress } from "./progress.js";
export type { ConversationOutcome } from "./package-file-import.js";
export { importConversationFile, readConversationFile } from "./package-file-import.js";
export type { ConversationFileRead } from "./package-file-import.js";

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
 * Below this many bytes to import, an import with the default jobs starts no worker thread.
 * Measured (2 cores, Codex sessions, bench/interop's generator): a worker loads in ~0.2 s from
 * the TypeScript sources (tsx's cache warm) and then runs cold code; with 10 MB two threads took
 * longer than one (0.62-0.72 s against 0.53-0.56 s), with 20 MB as long, with 50 MB and 100 MB
 * less (100 MB: 2.19 s against 2.66-2.98 s). Every thread shares the cores with the thread
 * pool's fsyncs, so the gain is below 2×.
 */
export const PARALLEL_IMPORT_MIN_BYTES = 32e6;

/**
 * Imports source files into one format-1 package per conversation under `into`, a few files at
 * a time (memory is bounded by the largest files, not the folder). Every file is fsynced before
 * it is renamed into place; the folders' fsyncs that make the renames durable are done together
 * at the end (FolderSyncBatch), so everything imported is durable when this returns.
 *
 * `jobs` threads import at once (default: defaultImportJobs()): the main thread and jobs - 1
 * worker threads taking whole files from one queue (parallel-import.ts); `jobs: 1` imports in
 * this thread only. Without an explicit `jobs`, workers start only when there is at least
 * PARALLEL_IMPORT_MIN_BYTES to import. Never more workers than files after the first. The
 * report is the same whatever the threads (files in the order given). With `inMainThread:
 * false` the main thread leaves the importing to `jobs` workers (an application's UI thread, and
 * the tests that check the workers' part). `onThreads` is told the files each thread imported
 * (the main thread's first).
 */
export async function importIntoPackages(options: {
  readonly source: ConversationSource;
  readonly files: readonly string[];
  readonly into: string;
  readonly jobs?: number;
  readonly inMainThread?: boolean;
  readonly onProgress?: (progress: ImportProgress) => void;
  readonly onThreads?: (filesByThread: readonly number[]) => void;
}): Promise<PackageImportReport> {
  const fileDone = await progressCounter(options.files, options.onProgress);
  let bytes = 0;
  let messages = 0;
  const done = (outcome: FileOutcome): void => {
    const fileMessages = outcome.conversations.reduce(
      (sum, conversation) => sum + conversation.messages,
      0,
    );
    bytes += outcome.bytes;
    messages += fileMessages;
    fileDone(outcome.bytes, fileMessages);
  };
  const folderSyncs = new FolderSyncBatch();
  const inMainThread = options.inMainThread ?? true;
  const workers = await workerCount(options.files, options.jobs, inMainThread);
  // With no worker, the main thread alone takes the files (a few at a time).
  const threaded = await importWithThreads({
    ...options,
    workers,
    inMainThread,
    folderSyncs,
    onFile: done,
  });
  if (threaded.failure !== undefined) {
    // What was written before the failure is made durable too; the failure is what is reported.
    await folderSyncs.flush().catch(() => undefined);
    throw threaded.failure;
  }
  await folderSyncs.flush();
  options.onThreads?.(threaded.filesByThread);
  return packageReport(options, threaded.results, bytes, messages);
}

/**
 * The worker threads to start: jobs - 1 beside the main thread (jobs when it only gathers), no
 * more than the files it leaves them; by default none for less than PARALLEL_IMPORT_MIN_BYTES.
 */
async function workerCount(
  files: readonly string[],
  jobs: number | undefined,
  inMainThread: boolean,
): Promise<number> {
  const main = inMainThread ? 1 : 0;
  const workers = Math.min((jobs ?? defaultImportJobs()) - main, files.length - main);
  if (workers <= 0 || jobs !== undefined || !inMainThread) return Math.max(workers, 0);
  let total = 0;
  for (const file of files) {
    total += (await stat(file).catch(() => ({ size: 0 }))).size;
    if (total >= PARALLEL_IMPORT_MIN_BYTES) return workers;
  }
  return 0;
}

function packageReport(
  options: {
    readonly source: ConversationSource;
    readonly into: string;
    readonly files: readonly string[];
  },
  results: readonly (FileOutcome | undefined)[],
  bytes: number,
  messages: number,
): PackageImportReport {
  const accounts: FileAccount[] = [];
  const conversations: ConversationOutcome[] = [];
  const leftOut: LeftOutEntry[] = [];
  const unreadableFiles: { file: string; reason: string }[] = [];
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
