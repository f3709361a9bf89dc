import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { GatewayConversations } from "../conversations/conversations.js";
import { GatewayImageStore } from "../conversations/images.js";
import type { GatewayMessage } from "../conversations/message-types.js";
import type { AppendMessageInput } from "../conversations/prepare-append.js";
import type { ImageUrlPolicy } from "../upstream/image-url-policy.js";
import type { ConversationItemList, ItemPageQuery } from "./conversation-schemas.js";
import { callsOf, inputToMessages, messageItemsWithImages, messageToItems } from "./convert.js";
import { imageUrlsOf } from "./image-urls.js";
import { resolveInputImages } from "./input-images.js";
import { resolveReferences } from "./request-context.js";
import type { InputItem, ResponseItem } from "./schemas.js";

/**
 * A conversation's items as the Conversations API reads and writes them: the messages of its
 * chain as items (with their kept images), input items as messages to append.
 */

const itemIdsOf = (message: GatewayMessage) => messageToItems(message).map((item) => item.id);

/** Stored messages as items, with the URLs of their kept images. */
export async function itemsOfMessages(
  conversations: GatewayConversations,
  subject: string,
  messages: readonly GatewayMessage[],
): Promise<ResponseItem[]> {
  const images = await imageUrlsOf(conversations.store, subject, messages);
  return messages.flatMap((message) => messageItemsWithImages(message, images));
}

/** The items of a conversation the subject sees, oldest first (deleted ones left out). */
export async function conversationItems(
  conversations: GatewayConversations,
  subject: string,
  conversationId: string,
): Promise<ResponseItem[]> {
  const { messages, deleted } = await conversations.chain(subject, conversationId, itemIdsOf);
  const items = await itemsOfMessages(conversations, subject, messages);
  return items.filter((item) => !deleted.has(item.id));
}

/** One item of a conversation, answered as missing when the subject cannot see it. */
export async function conversationItem(
  conversations: GatewayConversations,
  subject: string,
  conversationId: string,
  itemId: string,
): Promise<ResponseItem> {
  const items = await conversationItems(conversations, subject, conversationId);
  const item = items.find((candidate) => candidate.id === itemId);
  if (item === undefined) throw itemNotFound(conversationId, itemId);
  return item;
}

function itemNotFound(conversationId: string, itemId: string): VerbatimError {
  return new VerbatimError(
    "resource_not_found",
    `no item ${itemId} in conversation ${conversationId}`,
    {
      where: itemId,
      hint: "Item ids are those GET /v1/conversations/:id/items lists",
    },
  );
}

/** Items as OpenAI's list object; `hasMore` when a page leaves some out. */
export function itemList(items: readonly ResponseItem[], hasMore = false): ConversationItemList {
  return {
    object: "list",
    data: [...items],
    first_id: items[0]?.id ?? null,
    last_id: items[items.length - 1]?.id ?? null,
    has_more: hasMore,
  };
}

/** A page of items as OpenAI's list: `after` an item id, in `order`, `limit` of them. */
export function itemPage(
  items: readonly ResponseItem[],
  query: ItemPageQuery,
): ConversationItemList {
  let ordered = query.order === "desc" ? [...items].reverse() : [...items];
  if (query.after !== undefined) {
    const index = ordered.findIndex((item) => item.id === query.after);
    ordered = index < 0 ? [] : ordered.slice(index + 1);
  }
  return itemList(ordered.slice(0, query.limit), ordered.length > query.limit);
}

/** A refusal named as the Conversations API calls the field (`body.items[n]`). */
function asItemsError(error: unknown): unknown {
  if (!isVerbatimError(error) || error.where?.startsWith("body.input") !== true) return error;
  return new VerbatimError(error.code, error.message.replaceAll("body.input", "body.items"), {
    where: error.where.replace("body.input", "body.items"),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    ...(error.details === undefined ? {} : { details: error.details }),
  });
}

/**
 * Input items as messages to append after `context`, as the input of a response becomes
 * messages: a function call output names a call of the context or of the items before it, an
 * `item_reference` names a stored item of the subject's own, system and developer items keep
 * their role (a gateway fact), images are kept (input-images.ts). Every appended message is
 * `completed`.
 */
export async function itemsToMessages(
  conversations: GatewayConversations,
  subject: string,
  items: readonly InputItem[],
  context: readonly Message[],
  imageUrls: ImageUrlPolicy | undefined,
): Promise<AppendMessageInput[]> {
  const { store } = conversations;
  let messages;
  let images;
  try {
    const references = await resolveReferences(store, subject, [...items]);
    images = await resolveInputImages([...items], imageUrls);
    messages = inputToMessages([...items], callsOf(context), references, images);
  } catch (error) {
    throw asItemsError(error);
  }
  // Kept before the items are appended (an image kept twice is one row).
  await new GatewayImageStore(store.database).save(subject, images.values());
  return messages.map((message): AppendMessageInput => ({
    role: message.role,
    content: message.content,
    ...(message.inputRole === undefined ? {} : { gateway: { inputRole: message.inputRole } }),
  }));
}
