import { sha256Hex } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { ImportedConversation } from "verbatim-llm/interop";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import { DEFAULT_GATEWAY_LIMITS } from "../validation/checks.js";
import { insertIdempotencyKeysIfAbsent } from "../../store/repositories/gateway-idempotency.js";
import { importedCallFacts } from "./call-facts.js";
import { longestStoredRun, prefixKeys, runKeys, writeKey, type StoredRun } from "./chain-keys.js";

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
 * right after its result), a long turn split at the store's limit.
 */
export function splitTurns<T extends { readonly role: Message["role"] }>(
  messages: readonly T[],
): T[][] {
  const size = DEFAULT_GATEWAY_LIMITS.maxMessagesPerWrite;
  const turns: T[][] = [];
  let current: T[] = [];
  messages.forEach((message, index) => {
    const startsTurn = message.role === "user" && index > 0 && messages[index - 1]?.role !== "tool";
    if ((startsTurn || current.length === size) && current.length > 0) {
      turns.push(current);
      current = [];
    }
    current.push(message);
  });
  if (current.length > 0) turns.push(current);
  return turns;
}

/** A history's turns (splitTurns), each with the SHA-256 of its messages as JSON. */
function turnsOf(messages: readonly Message[]): { messages: Message[]; sha256: string }[] {
  return splitTurns(messages).map((turn) => ({
    messages: turn,
    sha256: sha256Hex(JSON.stringify(turn)),
  }));
}

/** What writing a history's turns takes (writeTurns). */
export interface TurnWrites<T extends { readonly messages: readonly unknown[] }> {
  /** The longest run of turns from `next` (up to `end`) written before from `anchor`. */
  stored(anchor: string | null, next: number, end: number): Promise<StoredRun | undefined>;
  /** Writes turns after `anchor` (null: a new chain, in `conversation` when given). */
  write(
    group: readonly T[],
    anchor: string | null,
    conversation: string | undefined,
  ): Promise<{ ids: string[]; conversationId: string; written: number }>;
}

/**
 * Appends a history's turns after `previous`, as few writes as the store allows: consecutive
 * turns are written together, up to the store's limit of messages a write. Each write's
 * idempotency key is made of the source, its id, the branch, the anchor and the turns' content,
 * so a write is found again by what it holds: at each point the longest run of turns already
 * written from that anchor (by this import or an earlier one, whatever its grouping) is taken as
 * stored, and only what follows is written. A re-run writes nothing; a session that grew
 * continues its chain after the turns stored before (a last turn that changed becomes a fork
 * beside the earlier one). Returns the stored ids in order and how many messages this run wrote.
 */
export async function writeTurns<T extends { readonly messages: readonly unknown[] }>(
  turns: readonly T[],
  previous: string | null,
  conversationId: string | undefined,
  writes: TurnWrites<T>,
): Promise<{ ids: string[]; written: number; conversationId: string | undefined }> {
  const limit = DEFAULT_GATEWAY_LIMITS.maxMessagesPerWrite;
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
    const replayed = await writes.stored(anchor, next, end);
    if (replayed !== undefined) {
      ids.push(...replayed.messageIds);
      anchor = replayed.messageIds[replayed.messageIds.length - 1] ?? anchor;
      conversation = replayed.conversationId;
      next = replayed.stop;
      continue;
    }
    const stored = await writes.write(turns.slice(next, end), anchor, conversation);
    const last = stored.ids[stored.ids.length - 1];
    if (last === undefined) break;
    ids.push(...stored.ids);
    written += stored.written;
    anchor = last;
    conversation = stored.conversationId;
    next = end;
  }
  return { ids, written, conversationId: conversation };
}

/**
 * Records, beside a write of several turns, a key for each shorter run of its first turns, so
 * that a later import whose last turn changed finds the turns before it (and forks there, as a
 * write per turn would) instead of starting the conversation again (chain-keys.ts).
 */
async function recordPrefixes(
  chain: ChainWrite,
  label: string,
  anchor: string | null,
  group: readonly { messages: readonly Message[]; sha256: string }[],
  stored: readonly { id: string; conversationId: string }[],
): Promise<void> {
  if (group.length < 2) return;
  const keys = prefixKeys(chain.imported, label, anchor, group, {
    subject: chain.subject,
    appendKey: writeKey(chain.imported, label, anchor, group),
    conversationId: stored[0]?.conversationId ?? "",
    now: chain.store.now(),
  });
  // One statement (atomic by itself); a key recorded already is left as it is.
  await insertIdempotencyKeysIfAbsent(
    chain.store.database.db,
    keys.map((key) => key.row),
  );
}

/**
 * Appends a history after `previous` through the gateway's `appendMessages` (writeTurns), each
 * write with its idempotency key, then its prefix keys.
 */
export async function appendMessagesFrom(
  chain: ChainWrite,
  label: string,
  messages: readonly Message[],
  previous: string | null,
  conversationId: string | undefined,
): Promise<{ ids: string[]; written: number; conversationId: string | undefined }> {
  const { store, subject, imported, startedAt, metadata } = chain;
  const turns = turnsOf(messages);
  return writeTurns(turns, previous, conversationId, {
    stored: (anchor, next, end) =>
      longestStoredRun(
        store.database.db,
        subject,
        runKeys(imported, label, anchor, turns, next, end),
        end,
      ),
    async write(group, anchor, conversation) {
      const starts = anchor === null && conversation === undefined;
      const at = new Date(startedAt);
      const stored = await store.appendMessages(subject, {
        previousMessageId: anchor,
        ...(anchor === null && conversation !== undefined ? { conversationId: conversation } : {}),
        messages: group.flatMap((turn) =>
          turn.messages.map((message) => {
            const gateway = importedCallFacts(imported, message, at);
            return {
              role: message.role,
              content: message.content,
              ...(gateway === undefined ? {} : { gateway }),
            };
          }),
        ),
        idempotencyKey: writeKey(imported, label, anchor, group),
        ...(starts ? { conversationMetadata: { ...metadata } } : {}),
      });
      if (stored.length > 0) await recordPrefixes(chain, label, anchor, group, stored);
      return {
        ids: stored.map((message) => message.id),
        conversationId: stored[0]?.conversationId ?? "",
        written: stored.filter((message) => message.createdAt >= startedAt).length,
      };
    },
  });
}
