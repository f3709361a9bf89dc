import type { GatewayConversations } from "../conversations/conversations.js";
import type { GatewayConversation } from "../conversations/message-types.js";
import type { ImageUrlPolicy } from "../upstream/image-url-policy.js";
import {
  conversationItem,
  conversationItems,
  itemList,
  itemPage,
  itemsOfMessages,
  itemsToMessages,
} from "./conversation-items.js";
import type {
  ConversationDeleted,
  ConversationItemList,
  ConversationObject,
  CreateConversationBody,
  CreateItemsBody,
  ItemPageQuery,
  UpdateConversationBody,
} from "./conversation-schemas.js";
import type { ResponseItem } from "./schemas.js";

/** A conversation as the Conversations API gives it. */
function conversationObject(conversation: GatewayConversation): ConversationObject {
  return {
    id: conversation.id,
    object: "conversation",
    created_at: Math.floor(Date.parse(conversation.createdAt) / 1000),
    metadata: { ...conversation.metadata },
  };
}

/** The conversation a request names: an id, or an object with one. */
function conversationIdOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "id" in value) {
    const id = (value as { id: unknown }).id;
    return typeof id === "string" ? id : undefined;
  }
  return undefined;
}

/**
 * The Conversations API (OpenAI's `/v1/conversations`, docs/server/conversations.md) over the subject's
 * conversations (gateway/conversations/conversations.ts): a conversation's items are the messages of its
 * current chain, items given are appended as a response's input becomes messages
 * (conversation-items.ts), and a deletion is a tombstone the operator still reads through. The
 * HTTP routes (server/routes/conversations.ts) parse a request, call one method and write its
 * answer; a refusal is a VerbatimError.
 */
export class ConversationsService {
  readonly conversations: GatewayConversations;
  readonly #imageUrls: ImageUrlPolicy | undefined;

  constructor(
    conversations: GatewayConversations,
    /** Which image URLs of items are fetched (docs/server/responses.md, "Images"); undefined: the default. */
    imageUrls: ImageUrlPolicy | undefined,
  ) {
    this.conversations = conversations;
    this.#imageUrls = imageUrls;
  }

  /** Creates a conversation, with its first items when given (in one write with them). */
  async create(subject: string, body: CreateConversationBody): Promise<ConversationObject> {
    const items = body.items ?? [];
    const { conversation } = await this.conversations.create(subject, {
      metadata: body.metadata ?? {},
      messages:
        items.length === 0
          ? []
          : await itemsToMessages(this.conversations, subject, items, [], this.#imageUrls),
    });
    return conversationObject(conversation);
  }

  /** A conversation the subject can see. */
  async get(subject: string, conversationId: string): Promise<ConversationObject> {
    return conversationObject(await this.conversations.get(subject, conversationId));
  }

  /** Replaces a conversation's metadata (none given: an empty map). */
  async updateMetadata(
    subject: string,
    conversationId: string,
    metadata: UpdateConversationBody["metadata"] | undefined,
  ): Promise<ConversationObject> {
    return conversationObject(
      await this.conversations.updateMetadata(subject, conversationId, metadata ?? {}),
    );
  }

  /** Deletes a conversation for the subject (a tombstone: the operator keeps its messages). */
  async delete(subject: string, conversationId: string): Promise<ConversationDeleted> {
    await this.conversations.delete(subject, conversationId);
    return { id: conversationId, object: "conversation.deleted", deleted: true };
  }

  /** A page of the conversation's items. */
  async listItems(
    subject: string,
    conversationId: string,
    query: ItemPageQuery,
  ): Promise<ConversationItemList> {
    return itemPage(await conversationItems(this.conversations, subject, conversationId), query);
  }

  /** Appends items at the end of the conversation; answers them as stored. */
  async appendItems(
    subject: string,
    conversationId: string,
    body: CreateItemsBody,
  ): Promise<ConversationItemList> {
    const context = await this.conversations.chain(subject, conversationId, () => []);
    const stored = await this.conversations.append(
      subject,
      conversationId,
      await itemsToMessages(
        this.conversations,
        subject,
        body.items,
        context.messages,
        this.#imageUrls,
      ),
    );
    return itemList(await itemsOfMessages(this.conversations, subject, stored));
  }

  /** One item of the conversation. */
  async getItem(subject: string, conversationId: string, itemId: string): Promise<ResponseItem> {
    return conversationItem(this.conversations, subject, conversationId, itemId);
  }

  /** Deletes one item for the subject (a tombstone); answers the conversation. */
  async deleteItem(
    subject: string,
    conversationId: string,
    itemId: string,
  ): Promise<ConversationObject> {
    await conversationItem(this.conversations, subject, conversationId, itemId);
    await this.conversations.deleteItem(subject, itemId);
    return this.get(subject, conversationId);
  }

  /**
   * Refuses, as missing, the response and conversation a new response would continue when the
   * subject deleted them (the body as sent: its `previous_response_id` and `conversation`).
   */
  async checkContinuable(
    subject: string,
    body: { readonly previous_response_id?: unknown; readonly conversation?: unknown } | null,
  ): Promise<void> {
    const previous = body?.previous_response_id;
    if (typeof previous === "string") {
      await this.conversations.checkResponseVisible(subject, previous);
    }
    const conversation = conversationIdOf(body?.conversation);
    if (conversation !== undefined) await this.conversations.get(subject, conversation);
  }

  /**
   * A response's input items without those the subject deleted through the Conversations API
   * (the page's ids follow what is left); the list unchanged when none is.
   */
  async visibleInputItems<List extends { readonly data?: readonly { readonly id: string }[] }>(
    subject: string,
    list: List,
  ): Promise<List> {
    if (list.data === undefined || list.data.length === 0) return list;
    const deleted = await this.conversations.deletedAmong(
      subject,
      list.data.map((item) => item.id),
    );
    if (deleted.size === 0) return list;
    const data = list.data.filter((item) => !deleted.has(item.id));
    return {
      ...list,
      data,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
    };
  }
}
