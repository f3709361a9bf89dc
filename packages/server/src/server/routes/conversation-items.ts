import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { GatewayConversations } from "../../gateway/conversations.js";
import type { GatewayMessageStore } from "../../gateway/index.js";
import { resolveReferences } from "../../gateway/responses/request-context.js";
import { resolveInputImages } from "../../gateway/responses/input-images.js";
import type { ImageUrlPolicy } from "../../gateway/upstream/image-url-policy.js";
import { GatewayImageStore } from "../../gateway/images.js";
import type { AppendMessageInput } from "../../gateway/prepare-append.js";
import {
  callsOf,
  inputToMessages,
  messageItemsWithImages,
  messageToItems,
} from "../../gateway/responses/convert.js";
import { imageUrlsOf } from "../../gateway/responses/image-urls.js";
import type { InputItem, ResponseItem } from "../../gateway/responses/schemas.js";
import type { ConversationObject } from "./conversation-schemas.js";
import type { GatewayConversation } from "../../gateway/message-types.js";

/** A conversation as the Conversations API gives it. */
export function conversationObject(conversation: GatewayConversation): ConversationObject {
  return {
    id: conversation.id,
    object: "conversation",
    created_at: Math.floor(Date.parse(conversation.createdAt) / 1000),
    metadata: { ...conversation.metadata },
  };
}

const itemIdsOf = (message: Parameters<typeof messageToItems>[0]) =>
  messageToItems(message).map((item) => item.id);

/** The items of a conversation the subject sees, oldest first (deleted ones left out). */
export async function conversationItems(
  conversations: GatewayConversations,
  subject: string,
  conversationId: string,
): Promise<ResponseItem[]> {
  const { messages, deleted } = await conversations.chain(subject, conversationId, itemIdsOf);
  const images = await imageUrlsOf(conversations.store, subject, messages);
  return messages
    .flatMap((message) => messageItemsWithImages(message, images))
    .filter((item) => !deleted.has(item.id));
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

export function itemNotFound(conversationId: string, itemId: string): VerbatimError {
  return new VerbatimError(
    "resource_not_found",
    `no item ${itemId} in conversation ${conversationId}`,
    {
      where: itemId,
      hint: "Item ids are those GET /v1/conversations/:id/items lists",
    },
  );
}

/** A page of items as OpenAI's list: `after` an item id, in `order`, `limit` of them. */
export function itemPage(
  items: readonly ResponseItem[],
  query: {
    readonly limit: number;
    readonly order: "asc" | "desc";
    readonly after?: string | undefined;
  },
) {
  let ordered = query.order === "desc" ? [...items].reverse() : [...items];
  if (query.after !== undefined) {
    const index = ordered.findIndex((item) => item.id === query.after);
    ordered = index < 0 ? [] : ordered.slice(index + 1);
  }
  const data = ordered.slice(0, query.limit);
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: ordered.length > query.limit,
  };
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
  store: GatewayMessageStore,
  subject: string,
  items: readonly InputItem[],
  context: readonly Message[],
  imageUrls?: ImageUrlPolicy,
): Promise<AppendMessageInput[]> {
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
