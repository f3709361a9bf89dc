import { arrayOf, field, recordOf, stringOf, without, type JsonRecord } from "../json-access.js";
import type { SourceLine } from "../jsonl.js";
import type { LineLedger } from "../report.js";

/** A message record of a Gemini CLI session and the record (line, or place in the file) it is. */
export interface MessageAt {
  readonly record: number;
  readonly id: string;
  readonly value: JsonRecord;
  /** True for a message inside a `$set` or header line (other records share that line). */
  readonly shared: boolean;
}

/**
 * A session replayed as Gemini CLI reads it (`loadConversationRecord` of
 * packages/core/src/services/chatRecordingService.ts): its metadata, its messages in order, and
 * the message lists a `$rewindTo` cut (the other branches).
 */
export interface SessionRecords {
  readonly metadata: JsonRecord;
  readonly messages: readonly MessageAt[];
  readonly branches: readonly (readonly MessageAt[])[];
  /** Records kept whole or in part (the header, `$set` and `$rewindTo` lines, messages). */
  readonly kept: readonly number[];
}

const METADATA_ONLY = new Set(["messages"]);

const COPY_REASON =
  "an earlier copy of a message: Gemini CLI writes a message again whole under its id when it changes (its tool calls, results, tokens), and reads the last copy, which is imported";
const SET_REASON =
  "dropped by a later `$set` of the whole message list (Gemini CLI rewrote its history, e.g. after /compress or when it masked tool output): Gemini CLI no longer has it";
const REWIND_REASON =
  "removed by a later `$rewindTo` (the user rewound the conversation): Gemini CLI drops it; targets that keep forks (a database) keep it on a branch";

/** Replays the lines of a `session-*.jsonl` file: the header, messages, `$set` and `$rewindTo`. */
export function replayJsonLines(
  file: string,
  lines: readonly SourceLine[],
  ledger: LineLedger,
): SessionRecords {
  let metadata: JsonRecord = {};
  let current = new Map<string, MessageAt>();
  const branches: MessageAt[][] = [];
  const kept: number[] = [];
  const dropped: { entry: MessageAt; what: string; reason: string }[] = [];
  const drop = (entry: MessageAt, what: string, reason: string): void => {
    dropped.push({ entry, what, reason });
  };
  const put = (entry: MessageAt): void => {
    const earlier = current.get(entry.id);
    if (earlier !== undefined) drop(earlier, "earlier copy of a message", COPY_REASON);
    current.set(entry.id, entry);
  };
  const putAll = (messages: readonly unknown[], record: number): void => {
    for (const message of messages) {
      const value = recordOf(message);
      const id = stringOf(field(value, "id"));
      if (value !== undefined && id !== undefined) put({ record, id, value, shared: true });
      else
        ledger.leftOut.add(
          file,
          "message without an id",
          "Gemini CLI reads only messages with a string id",
          record,
        );
    }
  };
  for (const line of lines) {
    const value = line.value;
    const rewind = stringOf(field(value, "$rewindTo"));
    const id = stringOf(field(value, "id"));
    const set = recordOf(field(value, "$set"));
    if (rewind !== undefined) {
      const ids = [...current.keys()];
      const at = ids.indexOf(rewind);
      const removed = at === -1 ? ids : ids.slice(at);
      if (removed.length > 0) branches.push([...current.values()]);
      for (const gone of removed) {
        const entry = current.get(gone);
        if (entry !== undefined) drop(entry, "rewound message", REWIND_REASON);
        current.delete(gone);
      }
      kept.push(line.line);
    } else if (id !== undefined) {
      put({ record: line.line, id, value, shared: false });
      kept.push(line.line);
    } else if (set !== undefined) {
      const messages = arrayOf(field(set, "messages"));
      if (messages !== undefined) {
        const previous = current;
        current = new Map();
        putAll(messages, line.line);
        for (const entry of previous.values()) {
          if (current.has(entry.id)) drop(entry, "earlier copy of a message", COPY_REASON);
          else drop(entry, "message dropped by a $set", SET_REASON);
        }
      }
      metadata = { ...metadata, ...without(set, METADATA_ONLY) };
      kept.push(line.line);
    } else if (
      stringOf(field(value, "sessionId")) !== undefined &&
      stringOf(field(value, "projectHash")) !== undefined
    ) {
      metadata = { ...metadata, ...without(value, METADATA_ONLY) };
      putAll(arrayOf(field(value, "messages")) ?? [], line.line);
      kept.push(line.line);
    } else {
      ledger.leftOutLine(
        file,
        line.line,
        "line of an unknown kind",
        "neither a session header, a message (no string id), a `$set` nor a `$rewindTo`: Gemini CLI skips it too",
      );
    }
  }
  const surviving = new Set<number>();
  for (const entry of current.values()) surviving.add(entry.record);
  const droppedLines = new Set<number>();
  for (const { entry, what, reason } of dropped) {
    if (entry.shared || surviving.has(entry.record)) {
      ledger.leftOut.add(file, what, reason, entry.record);
    } else {
      ledger.leftOutLine(file, entry.record, what, reason);
      droppedLines.add(entry.record);
    }
  }
  return {
    metadata,
    messages: [...current.values()],
    branches,
    kept: kept.filter((record) => !droppedLines.has(record)),
  };
}

/**
 * The records of a whole-file session (`session-*.json` before Gemini CLI 0.39): record 1 is the
 * session's own fields, record n + 1 its n-th message.
 */
export function sessionObjectRecords(
  file: string,
  session: JsonRecord,
  ledger: LineLedger,
): SessionRecords {
  const messages: MessageAt[] = [];
  const kept = [1];
  (arrayOf(field(session, "messages")) ?? []).forEach((message, index) => {
    const record = index + 2;
    const value = recordOf(message);
    if (value === undefined) {
      ledger.leftOutLine(file, record, "message that is not an object", "it holds no message");
      return;
    }
    messages.push({
      record,
      id: stringOf(field(value, "id")) ?? `R${record}`,
      value,
      shared: false,
    });
    kept.push(record);
  });
  return { metadata: without(session, METADATA_ONLY), messages, branches: [], kept };
}
