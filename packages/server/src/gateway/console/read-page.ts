import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import type { GatewayMessage } from "../conversations/message-types.js";
import type { StoreDatabase } from "../../store/database.js";
import { listConversationMessageIds } from "../../store/repositories/console-messages.js";
import { SLICE_MS } from "./slices.js";

/** Fewest and most messages read at once (each read has its own fixed cost). */
const MIN_CHUNK = 10;
const MAX_CHUNK = 200;

/**
 * Messages of the subject by id, in the order given, without blocking the event loop: in
 * chunks with a turn of the event loop between them (reads are synchronous on SQLite), each
 * chunk sized from the time the previous one took per message, to take about SLICE_MS. The
 * messages come from the store's cache of final messages when it holds them (they are then
 * shared, read-only, and long-lived: building a page allocates no copy of their text, which
 * kept the garbage collector's young-generation pauses long), else from their rows. The list
 * ends before the first id that has no message (deleted between the two reads).
 */
export async function readMessagesInChunks(
  store: GatewayMessageStore,
  subject: string,
  ids: readonly string[],
): Promise<GatewayMessage[]> {
  const messages: GatewayMessage[] = [];
  let want = MIN_CHUNK;
  while (messages.length < ids.length) {
    const chunk = ids.slice(messages.length, messages.length + want);
    const started = performance.now();
    const read = await store.readMessages(subject, chunk);
    messages.push(...read);
    if (read.length < chunk.length) return messages;
    const perMessage = (performance.now() - started) / chunk.length;
    await yieldToEventLoop();
    want = Math.max(
      MIN_CHUNK,
      Math.min(MAX_CHUNK, Math.floor(SLICE_MS / Math.max(perMessage, 1e-3))),
    );
  }
  return messages;
}

/**
 * A page of a conversation's messages (all branches, in the order written: created_at, depth,
 * id, as the store's listMessages) without blocking the event loop: the page's ids first, in
 * one read of small columns, then the messages by id in chunks (readMessagesInChunks).
 * Reading the rows by OFFSET instead cost time in proportion to the offset (SQLite steps
 * through the skipped rows: 25–30 ms for the one row after 999 rows of 8 KiB) and one read of
 * 100 such rows 5–13 ms.
 */
export async function readConversationPage(
  database: StoreDatabase,
  store: GatewayMessageStore,
  subject: string,
  conversationId: string,
  page: { readonly limit: number; readonly offset: number },
): Promise<GatewayMessage[]> {
  const ids = await listConversationMessageIds(database.db, subject, conversationId, page);
  return readMessagesInChunks(store, subject, ids);
}
