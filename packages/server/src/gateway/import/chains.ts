import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { VerbatimError } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import {
  readConversationFile,
  type ConversationSource,
  type FileAccount,
  type ImportProgress,
  type ImportedConversation,
  type LeftOutEntry,
} from "verbatim-llm/interop";
import { progressCounter } from "verbatim-llm/internal";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import type { StoreDatabase } from "../../store/database.js";
import { SubagentLinks, sessionsBeforeSubagents } from "./chain-links.js";
import { outsideCallsNotKept } from "./outside-calls-kept.js";
import { appendMessagesFrom, type ChainWrite } from "./chain-writes.js";
import {
  ImportedChainRows,
  type ConversationRows,
  type ImportedChainRowsOptions,
} from "./chain-rows.js";

/** What happened to one conversation in the store. */
export type ChainOutcome = "imported" | "unchanged" | "extended" | "empty" | "refused";

export interface ChainImport {
  readonly name: string;
  readonly sourceId: string;
  readonly file: string;
  readonly outcome: ChainOutcome;
  readonly reason?: string;
  readonly conversationId?: string;
  /** The history's first stored message (it keeps the calls outside the history). */
  readonly firstMessageId?: string;
  readonly lastMessageId?: string;
  readonly messages: number;
  /** Other branches of the source stored as forks of the chain. */
  readonly forks?: number;
}

/**
 * Appends an imported conversation's history to the store as one chain (B4) through the
 * gateway's `appendMessages`, one write per run of turns (at most the store's limit each), each
 * with an idempotency key made of the source, its id, the anchor and the content. The import
 * itself writes the same rows through `ImportedChainRows` (chain-rows.ts); this path is
 * the reference its rows are compared with (test/interop/import-rows.test.ts).
 */
export async function appendImportedChain(
  store: GatewayMessageStore,
  subject: string,
  imported: ImportedConversation,
  startedAt: string,
  /** More metadata for the conversation when it is created (e.g. a sub-agent's parent). */
  links: Readonly<Record<string, string>> = {},
): Promise<ChainImport> {
  const chain: ChainWrite = {
    store,
    subject,
    imported,
    startedAt,
    metadata: chainMetadata(imported, links),
  };
  return appendChainWith(imported, {
    same: (a, b) => JSON.stringify(a) === JSON.stringify(b),
    append: (label, messages, previous, conversationId) =>
      appendMessagesFrom(chain, label, messages, previous, conversationId),
  });
}

/** A conversation's metadata in the store: its source, id and file, and `links`. */
function chainMetadata(
  imported: ImportedConversation,
  links: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    source: imported.source,
    source_id: imported.sourceId.slice(0, 200),
    file: basename(imported.file).slice(0, 200),
    ...links,
  };
}

/**
 * Appends an imported conversation as one chain with `rows` (the import's write path): re-running
 * the import writes nothing; a session that grew continues its chain (a last turn that changed
 * becomes a fork beside the earlier one, as a retry would); the other branches of the source
 * become forks where they leave the main history. A conversation refused (VerbatimError) writes
 * nothing.
 */
export async function appendImportedChainRows(
  rows: ImportedChainRows,
  imported: ImportedConversation,
  links: Readonly<Record<string, string>> = {},
): Promise<ChainImport> {
  if (imported.conversation.history.length === 0) return appendChainWith(imported, undefined);
  return rows.conversation(imported, chainMetadata(imported, links), (writes) =>
    appendChainWith(imported, writes),
  );
}

/** The chain of a conversation and its forks, written by `writes`. */
async function appendChainWith(
  imported: ImportedConversation,
  writes: ConversationRows | undefined,
): Promise<ChainImport> {
  const base = { name: imported.name, sourceId: imported.sourceId, file: imported.file };
  const history = imported.conversation.history;
  if (history.length === 0 || writes === undefined) {
    return {
      ...base,
      outcome: "empty",
      reason: "the conversation has no history to append",
      messages: 0,
    };
  }
  const main = await writes.append("main", history, null, undefined);
  const conversationId = main.ids.length === 0 ? undefined : main.conversationId;
  // Other branches become forks where they leave the main history (B4: a continuation of an
  // earlier message starts a new branch of the same conversation).
  let forks = 0;
  for (const [index, branch] of (imported.branches ?? []).entries()) {
    let shared = 0;
    while (
      shared < history.length &&
      shared < branch.length &&
      writes.same(history[shared] as Message, branch[shared] as Message)
    )
      shared++;
    if (shared === branch.length) continue;
    await writes.append(
      `branch-${index}`,
      branch.slice(shared),
      shared === 0 ? null : (main.ids[shared - 1] ?? null),
      conversationId,
    );
    forks++;
  }
  const first = main.ids[0];
  const last = main.ids[main.ids.length - 1];
  return {
    ...base,
    outcome:
      main.written === 0 ? "unchanged" : main.written === history.length ? "imported" : "extended",
    ...(conversationId === undefined ? {} : { conversationId }),
    ...(first === undefined ? {} : { firstMessageId: first }),
    ...(last === undefined ? {} : { lastMessageId: last }),
    messages: history.length,
    forks,
  };
}

export interface DatabaseImportReport {
  readonly source: ConversationSource;
  readonly database: string;
  readonly subject: string;
  readonly files: readonly FileAccount[];
  readonly conversations: readonly ChainImport[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly unreadableFiles: readonly { readonly file: string; readonly reason: string }[];
}

/**
 * Imports Claude Code or Codex files into the store, one chain per conversation (session files
 * before sub-agent files, so that a sub-agent's chain names its session's), one file at a time;
 * `onProgress` hears after each file (files, bytes, history messages).
 */
export async function importChainsIntoDatabase(
  database: StoreDatabase,
  databaseName: string,
  source: ConversationSource,
  subject: string,
  files: readonly string[],
  onProgress?: (progress: ImportProgress) => void,
  options: ImportedChainRowsOptions = {},
): Promise<DatabaseImportReport> {
  const fileDone = await progressCounter(files, onProgress);
  const rows = new ImportedChainRows(database, subject, options);
  const report: DatabaseImportReport = {
    source,
    database: databaseName,
    subject,
    files: [],
    conversations: [],
    leftOut: [],
    unreadableFiles: [],
  };
  const links = new SubagentLinks();
  try {
    await importFiles(rows, report, source, files, fileDone, links);
    // What the last batch holds (a failure before this leaves the batch unwritten: the run is
    // made again from what was committed).
    await rows.flush();
  } finally {
    await rows.close();
  }
  return report;
}

/** Each file's conversations planned (and written, batch by batch) through `rows`. */
async function importFiles(
  rows: ImportedChainRows,
  report: DatabaseImportReport,
  source: ConversationSource,
  files: readonly string[],
  fileDone: (bytes: number, messages: number) => void,
  links: SubagentLinks,
): Promise<void> {
  for (const file of sessionsBeforeSubagents(files)) {
    const read = await readConversationFile(source, file);
    if (read.result === undefined) {
      (report.unreadableFiles as { file: string; reason: string }[]).push({
        file,
        reason: read.reason,
      });
      fileDone(0, 0);
      continue;
    }
    const { bytes, result } = read;
    (report.files as FileAccount[]).push(result.account);
    (report.leftOut as LeftOutEntry[]).push(...result.leftOut);
    for (const imported of result.conversations) {
      let outcome: ChainImport;
      try {
        outcome = await appendImportedChainRows(rows, imported, links.metadataFor(imported));
        links.remember(imported, outcome.conversationId);
      } catch (error) {
        if (!(error instanceof VerbatimError)) throw error;
        outcome = {
          name: imported.name,
          sourceId: imported.sourceId,
          file,
          outcome: "refused",
          reason: error.describe(),
          messages: 0,
        };
      }
      (report.conversations as ChainImport[]).push(outcome);
      const unkept = await outsideCallsNotKept(rows, imported, outcome);
      if (unkept !== undefined) (report.leftOut as LeftOutEntry[]).push(unkept);
    }
    fileDone(
      bytes,
      result.conversations.reduce((sum, imported) => sum + imported.conversation.history.length, 0),
    );
  }
}

/**
 * Bytes of source files from which an import into a SQLite file writes on a thread of its own
 * (with `--jobs` above 1, the default on a machine of two cores or more): SQLite's inserts and
 * commits of each batch then run on a second core while the next batch is read, converted and
 * planned. Below it the thread's loading and the copying to it cost about what it saves
 * (Codex, compiled, 2 cores, 3 alternating runs each: 18 MB 1.19-1.34 s with the thread
 * against 1.01-1.34 s without, 38 MB 1.84-1.90 s against 1.93-2.00 s, 50 MB 2.10-2.13 s
 * against 2.37-2.42 s); the package import's workers start from the same size.
 */
export const WRITER_THREAD_MIN_BYTES = 32 * 1024 * 1024;

/** Whether an import of `bytes` of files with `jobs` threads writes on a thread of its own. */
export function useWriterThread(jobs: number, bytes: number): boolean {
  return jobs > 1 && bytes >= WRITER_THREAD_MIN_BYTES;
}

/** The files' bytes in all (a file that cannot be read counts nothing). */
export async function filesBytes(files: readonly string[]): Promise<number> {
  let bytes = 0;
  for (const file of files) bytes += (await stat(file).catch(() => ({ size: 0 }))).size;
  return bytes;
}
