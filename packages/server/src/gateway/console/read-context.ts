import { VerbatimError } from "verbatim-llm/core";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import type { GatewayMessage } from "../conversations/message-types.js";
import type { StoreDatabase } from "../../store/database.js";
import { listChainMessageIds } from "../../store/repositories/console-messages.js";
import { findAnchor } from "../../store/repositories/gateway-messages.js";
import { readMessagesInChunks } from "./read-page.js";

/**
 * The model-visible context of an anchor of the conversation (the store's readContext: its
 * chain back to the start or the last summary, oldest first) without blocking the event loop:
 * the chain's ids first, in one read of small columns, then the messages by id in chunks
 * through the message cache. One read of a 1,000-message context of 8 KiB messages blocked the
 * event loop for 45–125 ms the first time (issue 20). An anchor that is missing, of another
 * subject or of another conversation gets one answer: the console tells them apart no more
 * than the caller routes do.
 */
export async function readAnchorContext(
  database: StoreDatabase,
  store: GatewayMessageStore,
  subject: string,
  conversationId: string,
  anchorId: string,
): Promise<GatewayMessage[]> {
  const anchorNotFound = () =>
    new VerbatimError(
      "resource_not_found",
      `no message ${anchorId} in conversation ${conversationId}`,
      {
        where: "query.anchor",
        hint: "Pass the id of a message of this conversation, or no anchor",
      },
    );
  const anchor = await findAnchor(database.db, subject, anchorId);
  if (anchor === undefined || anchor.conversation_id !== conversationId) throw anchorNotFound();
  const ids = await listChainMessageIds(database.db, subject, anchor, anchor.context_start_depth);
  const messages = await readMessagesInChunks(store, subject, ids);
  // A chain always ends at its anchor; one read short of it lost a message meanwhile.
  if (messages.length !== ids.length || messages[messages.length - 1]?.id !== anchorId) {
    throw anchorNotFound();
  }
  return messages;
}
