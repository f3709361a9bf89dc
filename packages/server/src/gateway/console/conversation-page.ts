import type { GatewayMessageStore } from "../conversations/message-store.js";
import type { GatewayMessage } from "../conversations/message-types.js";
import type { StoreDatabase } from "../../store/database.js";
import { fitPageYielding } from "./fit-page.js";
import { modelInputOf, type ModelInputReply } from "./model-input.js";
import { encodeCursor } from "./cursor.js";
import { projectInSlices, type ConsoleView } from "./project-in-slices.js";
import { readAnchorContext } from "./read-context.js";
import { readConversationPage } from "./read-page.js";
import { jsonWithArrayInSlices } from "./slices.js";

/** What a conversation's message page is, once the route has checked and resolved it. */
export interface ConversationPageRequest {
  readonly conversationId: string;
  /** The conversation's subject (its owner). */
  readonly subject: string;
  readonly view: ConsoleView;
  /** The message whose context is shown; null: every message in the order written. */
  readonly anchor: string | null;
  readonly offset: number;
  readonly limit: number;
  readonly pageLimitBytes: number;
}

/**
 * The JSON reply (UTF-8) of a page of a conversation's messages in one of the three views:
 * read, projected, cut to the page size limit and serialized, each step in slices. It runs in
 * the console's worker thread, or on the event loop when the store cannot be opened there
 * (console/worker/pages.ts).
 */
export async function buildConversationPage(
  database: StoreDatabase,
  store: GatewayMessageStore,
  request: ConversationPageRequest,
): Promise<Buffer> {
  const { conversationId: id, subject, view, anchor, offset, limit } = request;
  let selected: GatewayMessage[];
  let more: boolean;
  let modelInput: ModelInputReply | null | undefined;
  if (anchor !== null) {
    const context = await readAnchorContext(database, store, subject, id, anchor);
    selected = context.slice(offset, offset + limit);
    more = context.length > offset + limit;
    if (view === "model-visible") modelInput = await modelInputOf(database, subject, context);
  } else {
    const page = await readConversationPage(database, store, subject, id, {
      limit: limit + 1,
      offset,
    });
    selected = page.slice(0, limit);
    more = page.length > limit;
  }
  const projected = await projectInSlices(view, selected);
  const page = await fitPageYielding(projected, request.pageLimitBytes);
  // Serialized in slices: one JSON.stringify of a 1 MiB page blocks too long.
  return jsonWithArrayInSlices(
    { view, conversation_id: id, subject_uid: subject, anchor },
    "messages",
    page.messages,
    {
      metadata: page.metadata,
      next_cursor: more ? encodeCursor(offset + limit) : null,
      ...(modelInput === undefined ? {} : { model_input: modelInput }),
    },
  );
}
