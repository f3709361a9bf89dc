import { sha256Hex } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { ImportedConversation } from "verbatim-llm/interop";
import type { GatewayMessageStore } from "../../gateway/message-store.js";
import { DEFAULT_GATEWAY_LIMITS } from "../../gateway/validation.js";
import {
  findIdempotencyKeys,
  insertIdempotencyKeysIfAbsent,
  type IdempotencyKeyRow,
} from "../../store/repositories/gateway-idempotency.js";

/** The operation of the keys that name the turns a write began with (never an append's key). */
const PREFIX_OPERATION = "import-prefix";

/** What every write of one imported chain shares. */
export interface ChainWrite {
  readonly store: GatewayMessageStore;
  readonly subject: string;
  readonly imported: ImportedConversation;
  readonly startedAt: string;
  /** The conversation's metadata, written with its first message. */
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * A history's turns (a turn starts at each user message that does not carry a tool's images
 * right after its result), a long turn split at the store's limit; each with the SHA-256 of its
 * messages.
 */
function turnsOf(messages: readonly Message[]): { messages: Message[]; sha256: string }[] {
  const size = DEFAULT_GATEWAY_LIMITS.maxMessagesPerWrite;
  const turns: Message[][] = [];
  let current: Message[] = [];
  messages.forEach((message, index) => {
    const startsTurn = message.role === "user" && index > 0 && messages[index - 1]?.role !== "tool";
    if ((startsTurn || current.length === size) && current.length > 0) {
      turns.push(current);
      current = [];
    }
    current.push(message);
  });
  if (current.length > 0) turns.push(current);
  return turns.map((turn) => ({ messages: turn, sha256: sha256Hex(JSON.stringify(turn)) }));
}

/** The idempotency key of a write: the source, its id, the branch, the anchor, the turns. */
function writeKey(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
): string {
  const digest = sha256Hex(
    [
      imported.source,
      imported.sourceId,
      label,
      anchor ?? "",
      ...turns.map((turn) => turn.sha256),
    ].join("\u0000"),
  );
  return `import-${digest.slice(0, 48)}`;
}

/** The message ids a recorded write stored, or undefined when it is not one. */
function storedWrite(
  row: IdempotencyKeyRow | undefined,
): { conversationId: string; messageIds: string[] } | undefined {
  if (row === undefined || (row.operation !== "append" && row.operation !== PREFIX_OPERATION))
    return undefined;
  const result: unknown = JSON.parse(row.result);
  if (typeof result !== "object" || result === null) return undefined;
  const { conversationId, messageIds } = result as Record<string, unknown>;
  if (typeof conversationId !== "string" || !Array.isArray(messageIds)) return undefined;
  const ids = messageIds.filter((id): id is string => typeof id === "string");
  return ids.length === messageIds.length ? { conversationId, messageIds: ids } : undefined;
}

/**
 * The longest run of `turns` from `next` (up to `end`) already written from `anchor`, with the
 * ids it stored: the keys of every run looked up in one read.
 */
async function longestStoredRun(
  chain: ChainWrite,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
  next: number,
  end: number,
): Promise<{ stop: number; conversationId: string; messageIds: string[] } | undefined> {
  const keys: string[] = [];
  for (let stop = end; stop > next; stop--)
    keys.push(writeKey(chain.imported, label, anchor, turns.slice(next, stop)));
  const rows = await findIdempotencyKeys(chain.store.database.db, chain.subject, keys);
  if (rows.length === 0) return undefined;
  const byKey = new Map(rows.map((row) => [row.idempotency_key, row]));
  for (const [index, key] of keys.entries()) {
    const stored = storedWrite(byKey.get(key));
    if (stored !== undefined && stored.messageIds.length > 0)
      return { stop: end - index, ...stored };
  }
  return undefined;
}

/**
 * Records, beside a write of several turns, a key for each shorter run of its first turns, so
 * that a later import whose last turn changed finds the turns before it (and forks there, as a
 * write per turn would) instead of starting the conversation again.
 */
async function recordPrefixes(
  chain: ChainWrite,
  label: string,
  anchor: string | null,
  group: readonly { messages: readonly Message[]; sha256: string }[],
  stored: readonly { id: string; conversationId: string; createdAt: string }[],
): Promise<void> {
  if (group.length < 2) return;
  const now = chain.store.now();
  const rows: IdempotencyKeyRow[] = [];
  let count = 0;
  for (let end = 1; end < group.length; end++) {
    count += group[end - 1]?.messages.length ?? 0;
    const key = writeKey(chain.imported, label, anchor, group.slice(0, end));
    rows.push({
      subject_uid: chain.subject,
      idempotency_key: key,
      operation: PREFIX_OPERATION,
      request_sha256: key.slice("import-".length),
      result: JSON.stringify({
        conversationId: stored[0]?.conversationId ?? "",
        messageIds: stored.slice(0, count).map((message) => message.id),
      }),
      created_at: now,
    });
  }
  // One statement (atomic by itself); a key recorded already is left as it is.
  await insertIdempotencyKeysIfAbsent(chain.store.database.db, rows);
}

/**
 * Appends a history after `previous`, as few writes as the store allows: consecutive turns
 * are written together, up to the store's limit of messages a write. Each write's idempotency
 * key is made of the source, its id, the branch, the anchor and the turns' content, so a write
 * is found again by what it holds: at each point the longest run of turns already written from
 * that anchor (by this import or an earlier one, whatever its grouping) is taken as stored, and
 * only what follows is written. A re-run writes nothing; a session that grew continues its
 * chain after the turns stored before (a last turn that changed becomes a fork beside the
 * earlier one). Returns the stored ids in order and how many messages this run wrote.
 */
export async function appendMessagesFrom(
  chain: ChainWrite,
  label: string,
  messages: readonly Message[],
  previous: string | null,
  conversationId: string | undefined,
): Promise<{ ids: string[]; written: number; conversationId: string | undefined }> {
  const { store, subject, imported, startedAt, metadata } = chain;
  const limit = DEFAULT_GATEWAY_LIMITS.maxMessagesPerWrite;
  const turns = turnsOf(messages);
  const ids: string[] = [];
  let written = 0;
  let anchor = previous;
  let conversation = conversationId;
  let next = 0;
  while (next < turns.length) {
    // The turns that fit in one write from here.
    let end = next;
    let size = 0;
    while (end < turns.length && size + (turns[end]?.messages.length ?? 0) <= limit) {
      size += turns[end]?.messages.length ?? 0;
      end++;
    }
    // The longest of them already written from this anchor.
    const replayed = await longestStoredRun(chain, label, anchor, turns, next, end);
    if (replayed !== undefined) {
      ids.push(...replayed.messageIds);
      anchor = replayed.messageIds[replayed.messageIds.length - 1] ?? anchor;
      conversation = replayed.conversationId;
      next = replayed.stop;
      continue;
    }
    const group = turns.slice(next, end);
    const starts = anchor === null && conversation === undefined;
    const stored = await store.appendMessages(subject, {
      previousMessageId: anchor,
      ...(anchor === null && conversation !== undefined ? { conversationId: conversation } : {}),
      messages: group.flatMap((turn) =>
        turn.messages.map((message) => ({ role: message.role, content: message.content })),
      ),
      idempotencyKey: writeKey(imported, label, anchor, group),
      ...(starts ? { conversationMetadata: { ...metadata } } : {}),
    });
    for (const message of stored) {
      ids.push(message.id);
      if (message.createdAt >= startedAt) written++;
    }
    const last = stored[stored.length - 1];
    if (last === undefined) break;
    await recordPrefixes(chain, label, anchor, group, stored);
    anchor = last.id;
    conversation = last.conversationId;
    next = end;
  }
  return { ids, written, conversationId: conversation };
}
