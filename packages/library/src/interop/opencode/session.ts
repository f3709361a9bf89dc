import { arrayOf, field, numberOf, recordOf, stringOf, type JsonRecord } from "../json-access.js";

/** One message of an OpenCode session: its info (role, model, tokens, cost) and its parts. */
export interface OpenCodeMessage {
  readonly info: JsonRecord;
  readonly parts: readonly JsonRecord[];
}

/**
 * One OpenCode session as every storage form holds it, in the shape of `opencode export`:
 * `{info: Session, messages: [{info: Message, parts: Part[]}]}`. Records are counted in this
 * order: the session, then each message followed by its parts (record 1 is the session).
 */
export interface OpenCodeSession {
  readonly info: JsonRecord;
  readonly messages: readonly OpenCodeMessage[];
}

/** Records of a session: 1 for its info, 1 per message and 1 per part. */
export function recordCount(session: OpenCodeSession): number {
  let count = 1;
  for (const message of session.messages) count += 1 + message.parts.length;
  return count;
}

/** The session in an export's parsed JSON, or undefined when it is not one. */
export function sessionOfExport(value: unknown): OpenCodeSession | undefined {
  const record = recordOf(value);
  const info = recordOf(field(record, "info"));
  const messages = arrayOf(field(record, "messages"));
  if (info === undefined || messages === undefined || stringOf(field(info, "id")) === undefined)
    return undefined;
  return {
    info,
    messages: messages.map((entry) => {
      const message = recordOf(entry);
      return {
        info: recordOf(field(message, "info")) ?? {},
        parts: (arrayOf(field(message, "parts")) ?? []).map((part) => recordOf(part) ?? {}),
      };
    }),
  };
}

/** Messages in the order OpenCode reads them: by creation time, then by id. */
export function byCreation(a: JsonRecord, b: JsonRecord): number {
  const time = (info: JsonRecord): number =>
    numberOf(field(recordOf(field(info, "time")), "created")) ?? 0;
  const id = (info: JsonRecord): string => stringOf(field(info, "id")) ?? "";
  return time(a) - time(b) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);
}
