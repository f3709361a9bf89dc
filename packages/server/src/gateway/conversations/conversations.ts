import type { StoreDatabase } from "../../store/database.js";
import {
  findCallerDeletions,
  insertCallerDeletion,
  isMessageOrItsConversationDeleted,
  type CallerDeletionKind,
} from "../../store/repositories/gateway-caller-deletions.js";
import {
  findNewestMessageId,
  findUnstoredResponseIds,
  updateConversationMetadata,
} from "../../store/repositories/gateway-conversations.js";
import type { GatewayMessageStore } from "./message-store.js";
import type { AppendMessageInput } from "./prepare-append.js";
import type { CallerMetadata, GatewayConversation, GatewayMessage } from "./message-types.js";
import { conversationNotFound, messageNotFound } from "./not-found.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import { idSchema, parseOrThrow, subjectSchema } from "../validation/checks.js";

/**
 * The conversations a subject sees through the API (the Conversations API, docs/server/conversations.md):
 * a conversation's items are the messages of its current chain (the chain that ends at its
 * newest message), and a deletion is a tombstone (src/store ai_gateway_caller_deletions): the
 * rows stay for the operator, and the subject gets exactly the answer a missing id gets.
 */
export class GatewayConversations {
  readonly #database: StoreDatabase;

  /** The message store the conversations are read from and written to. */
  readonly store: GatewayMessageStore;

  constructor(store: GatewayMessageStore) {
    this.store = store;
    this.#database = store.database;
  }

  /**
   * Creates a conversation, with its first messages when given: then in one write with them, so
   * a refused write leaves no empty conversation behind.
   */
  async create(
    subjectUid: string,
    input: {
      readonly metadata?: CallerMetadata;
      readonly messages?: readonly AppendMessageInput[];
    },
  ): Promise<{ readonly conversation: GatewayConversation; readonly messages: GatewayMessage[] }> {
    const metadata = input.metadata ?? {};
    const messages = input.messages ?? [];
    if (messages.length === 0) {
      return {
        conversation: await this.store.createConversation(subjectUid, { metadata }),
        messages: [],
      };
    }
    const stored = await this.store.appendMessages(subjectUid, {
      previousMessageId: null,
      conversationMetadata: metadata,
      messages,
    });
    const first = stored[0];
    if (first === undefined) throw new Error("append returned no message");
    return {
      conversation: await this.store.getConversation(subjectUid, first.conversationId),
      messages: stored,
    };
  }

  /** A conversation the subject can see (not another subject's, not deleted). */
  async get(subjectUid: string, conversationId: string): Promise<GatewayConversation> {
    const conversation = await this.store.getConversation(subjectUid, conversationId);
    if ((await this.#deleted(subjectUid, [conversation.id])).size > 0) {
      throw conversationNotFound(conversationId);
    }
    return conversation;
  }

  /** Replaces a conversation's metadata (OpenAI's update: the whole map). */
  async updateMetadata(
    subjectUid: string,
    conversationId: string,
    metadata: CallerMetadata,
  ): Promise<GatewayConversation> {
    const conversation = await this.get(subjectUid, conversationId);
    const checked = checkCallerMetadata(metadata, "metadata");
    const updated = await updateConversationMetadata(
      this.#database.db,
      conversation.subjectUid,
      conversation.id,
      JSON.stringify(checked),
    );
    if (!updated) throw conversationNotFound(conversationId);
    return { ...conversation, metadata: checked };
  }

  /** Deletes a conversation for its subject (a tombstone). */
  async delete(subjectUid: string, conversationId: string): Promise<void> {
    const conversation = await this.get(subjectUid, conversationId);
    await this.#tombstone(conversation.subjectUid, conversation.id, "conversation");
  }

  /**
   * The messages of the conversation's current chain, oldest first, with the ids among
   * `itemIdsOf(message)` the subject deleted. A deleted message is left out, and so is a
   * response stored with `store: false` (readable by the operator only).
   */
  async chain(
    subjectUid: string,
    conversationId: string,
    itemIdsOf: (message: GatewayMessage) => readonly string[],
  ): Promise<{ readonly messages: GatewayMessage[]; readonly deleted: ReadonlySet<string> }> {
    const conversation = await this.get(subjectUid, conversationId);
    const tip = await findNewestMessageId(
      this.#database.db,
      conversation.subjectUid,
      conversation.id,
    );
    if (tip === undefined) return { messages: [], deleted: new Set() };
    const chain = await this.store.readFullChain(conversation.subjectUid, tip);
    const deleted = await this.#deleted(
      conversation.subjectUid,
      chain.flatMap((message) => [message.id, ...itemIdsOf(message)]),
    );
    // A response stored with `store: false` is the operator's only: not an item either.
    const unstored = await findUnstoredResponseIds(
      this.#database,
      conversation.subjectUid,
      chain.filter((message) => message.type === "assistant").map((message) => message.id),
    );
    return {
      messages: chain.filter((message) => !deleted.has(message.id) && !unstored.has(message.id)),
      deleted,
    };
  }

  /** The newest message of the conversation's current chain (deleted or not), if any. */
  async tip(subjectUid: string, conversationId: string): Promise<string | null> {
    const conversation = await this.get(subjectUid, conversationId);
    return (
      (await findNewestMessageId(this.#database.db, conversation.subjectUid, conversation.id)) ??
      null
    );
  }

  /** Appends messages at the end of the conversation's current chain. */
  async append(
    subjectUid: string,
    conversationId: string,
    messages: readonly AppendMessageInput[],
  ): Promise<GatewayMessage[]> {
    const tip = await this.tip(subjectUid, conversationId);
    return this.store.appendMessages(subjectUid, {
      previousMessageId: tip,
      conversationId,
      messages,
    });
  }

  /** Deletes one item of a conversation (a tombstone). */
  async deleteItem(subjectUid: string, itemId: string): Promise<void> {
    await this.#tombstone(subjectUid, itemId, "item");
  }

  /**
   * Refuses, as missing, a response (or any message) the subject deleted or whose conversation
   * it deleted; an id that names nothing passes (its reader answers it as missing).
   */
  async checkResponseVisible(subjectUid: string, responseId: string): Promise<void> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const id = parseOrThrow(idSchema, responseId, "responseId");
    if (await isMessageOrItsConversationDeleted(this.#database.db, subject, id)) {
      throw messageNotFound(responseId);
    }
  }

  /** Deletes a response for its subject (a tombstone); a deleted one is not found. */
  async deleteResponse(subjectUid: string, responseId: string): Promise<void> {
    await this.checkResponseVisible(subjectUid, responseId);
    const message = await this.store.getMessage(subjectUid, responseId);
    if (message.type !== "assistant" && message.type !== "summary") {
      throw messageNotFound(responseId);
    }
    await this.#tombstone(message.subjectUid, message.id, "response");
  }

  /** Which of these ids (items, responses, conversations) the subject deleted. */
  async deletedAmong(subjectUid: string, ids: readonly string[]): Promise<Set<string>> {
    return this.#deleted(subjectUid, ids);
  }

  async #deleted(subjectUid: string, ids: readonly string[]): Promise<Set<string>> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    return findCallerDeletions(this.#database.db, subject, ids);
  }

  async #tombstone(subjectUid: string, id: string, kind: CallerDeletionKind): Promise<void> {
    await insertCallerDeletion(this.#database.db, {
      subjectUid: parseOrThrow(subjectSchema, subjectUid, "subjectUid"),
      objectId: parseOrThrow(idSchema, id, "id"),
      kind,
      deletedAt: this.store.now(),
    });
  }
}
