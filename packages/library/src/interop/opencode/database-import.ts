import { basename } from "node:path";
import { sha256Hex } from "../../core/hash.js";
import type { ImportedConversation } from "../imported.js";
import type { ConversationFileRead } from "../conversation-file-read.js";
import { LeftOutLedger } from "../report.js";
import { convertSession } from "./convert.js";
import { isOpenCodeDatabaseName } from "./file-kinds.js";
import { openOpenCodeDatabase, type OpenCodeDatabase } from "./database.js";

/** Whether a file is OpenCode's SQLite database (by its name). */
export function isOpenCodeDatabase(file: string): boolean {
  return isOpenCodeDatabaseName(basename(file));
}

/**
 * Imports OpenCode's `opencode.db` (docs/interop/opencode.md): one conversation per session,
 * read a session at a time (memory is bounded by the largest session, not the database), each
 * parent session before its sub-sessions. Each session's SHA-256 covers its rows, so a session
 * that grew is imported again and the others are left as they are. Records are numbered across
 * the database in the order read (each session, then its messages and their parts).
 */
export async function importOpenCodeDatabase(file: string): Promise<ConversationFileRead> {
  const opened = await openOpenCodeDatabase(file);
  if ("reason" in opened) return { reason: opened.reason };
  const database = opened.database;
  try {
    return { bytes: database.bytes, result: readSessions(file, database) };
  } finally {
    database.close();
  }
}

function readSessions(file: string, database: OpenCodeDatabase) {
  const ledger = new LeftOutLedger();
  const conversations: ImportedConversation[] = [];
  let records = 0;
  let leftOut = 0;
  for (const id of database.sessionIds()) {
    const session = database.session(id);
    if (session === undefined) continue;
    const converted = convertSession(session.value, {
      file,
      sourceSha256: sha256Hex(session.rowsText),
      ledger,
      firstRecord: records + 1,
    });
    records += converted.records;
    leftOut += converted.leftOutRecords;
    if (converted.conversation !== undefined) conversations.push(converted.conversation);
  }
  for (const table of database.otherTables())
    ledger.add(file, `table ${table.name}`, table.reason, undefined);
  return {
    conversations,
    leftOut: ledger.list(),
    account: { file, lines: records, imported: records - leftOut, leftOut },
  };
}
