import type { StoreDatabase } from "../../store/database.js";
import {
  findAnchor,
  findMessageRows,
  readChainRows,
  type AnchorRow,
} from "../../store/repositories/gateway-messages.js";
import type { MessageMemory } from "./message-memory.js";
import type { GatewayMessage } from "./message-types.js";
import { messageNotFound } from "./not-found.js";
import { messageFromChainRow, messageFromRow } from "./rows.js";

/** A message's anchor facts: from memory when it holds the message, else its row. */
export async function findAnchorFacts(
  database: StoreDatabase,
  memory: MessageMemory,
  subject: string,
  id: string,
): Promise<AnchorRow | undefined> {
  return (
    memory.knownAnchor(subject, id).knownAnchor ?? (await findAnchor(database.db, subject, id))
  );
}

/**
 * The chain ending at `anchor` from `fromDepth` on. The newest part comes from memory as far
 * back as it holds the chain (following previous ids, which never cross a chain, so never a
 * subject); the older rest, if any, from one read of the database, whose final messages are
 * cached for the next read.
 */
export async function readChain(
  database: StoreDatabase,
  memory: MessageMemory,
  subject: string,
  anchor: AnchorRow,
  fromDepth: number,
): Promise<GatewayMessage[]> {
  const newest: GatewayMessage[] = [];
  let id: string | null = anchor.id;
  let depth = anchor.depth;
  while (id !== null && depth >= fromDepth) {
    const cached = memory.get(id);
    if (cached === undefined || cached.depth !== depth) break;
    newest.push(cached);
    id = cached.previousMessageId;
    depth--;
  }
  newest.reverse();
  if (depth < fromDepth || id === null) return newest;
  const end = id === anchor.id ? anchor : await findAnchor(database.db, subject, id);
  if (end === undefined) throw messageNotFound(anchor.id);
  const older = await readChainRows(database.db, subject, end, fromDepth, (row) => {
    const message = messageFromChainRow(row, subject, anchor.conversation_id);
    memory.cacheRow(message, row);
    return message;
  });
  return newest.length === 0 ? older : [...older, ...newest];
}

/**
 * Messages of this subject by id, in the order given: final ones from memory when it holds
 * them, the rest from one read of their rows (cached from then on). The list ends before the
 * first id that has no message of this subject.
 */
export async function readMessagesById(
  database: StoreDatabase,
  memory: MessageMemory,
  subject: string,
  ids: readonly string[],
): Promise<GatewayMessage[]> {
  const found = new Map<string, GatewayMessage>();
  const missing: string[] = [];
  for (const id of ids) {
    const cached = memory.get(id);
    if (cached !== undefined && cached.subjectUid === subject) found.set(id, cached);
    else missing.push(id);
  }
  for (const row of await findMessageRows(database.db, subject, missing)) {
    const message = messageFromRow(row);
    memory.cacheRow(message, row);
    found.set(row.id, message);
  }
  const messages: GatewayMessage[] = [];
  for (const id of ids) {
    const message = found.get(id);
    if (message === undefined) break;
    messages.push(message);
  }
  return messages;
}
