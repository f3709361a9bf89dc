import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { GatewayConversations } from "../../gateway/conversations.js";
import { errorReplySchema } from "../errors.js";
import { messageItemsWithImages } from "../../gateway/responses/convert.js";
import { imageUrlsOf } from "../../gateway/responses/image-urls.js";
import { responseItemSchema } from "../../gateway/responses/schemas.js";
import type { ImageUrlPolicy } from "../../gateway/upstream/image-url-policy.js";
import {
  conversationItem,
  conversationItems,
  conversationObject,
  itemPage,
  itemsToMessages,
} from "./conversation-items.js";
import {
  conversationDeletedSchema,
  conversationIdParamsSchema,
  conversationItemListSchema,
  conversationItemParamsSchema,
  conversationObjectSchema,
  createConversationBodySchema,
  createItemsBodySchema,
  includeQuerySchema,
  itemListQuerySchema,
  updateConversationBodySchema,
} from "./conversation-schemas.js";

const errors = {
  400: errorReplySchema,
  401: errorReplySchema,
  404: errorReplySchema,
  409: errorReplySchema,
  413: errorReplySchema,
  429: errorReplySchema,
};

const common = { tags: ["conversations"], security: [{ apiKey: [] }] };

type Params = z.infer<typeof conversationIdParamsSchema>;
type ItemParams = z.infer<typeof conversationItemParamsSchema>;

/**
 * The Conversations API (OpenAI's `/v1/conversations`): a conversation and its items, which are
 * the messages of its current chain. Deleting is a tombstone (src/gateway/conversations.ts).
 */
export function registerConversationRoutes(
  app: FastifyInstance,
  conversations: GatewayConversations,
  /** Which image URLs of items are fetched (docs/server.md, "Images"). */
  imageUrls?: ImageUrlPolicy,
): void {
  app.post<{ Body: z.infer<typeof createConversationBodySchema> }>(
    "/v1/conversations",
    {
      schema: {
        summary: "Create a conversation, with its first items when given",
        ...common,
        body: createConversationBodySchema,
        response: { 200: conversationObjectSchema, ...errors },
      },
    },
    async (request) => {
      const items = request.body.items ?? [];
      const { conversation } = await conversations.create(request.subjectUid, {
        metadata: request.body.metadata ?? {},
        messages:
          items.length === 0
            ? []
            : await itemsToMessages(conversations.store, request.subjectUid, items, [], imageUrls),
      });
      return conversationObject(conversation);
    },
  );

  app.get<{ Params: Params }>(
    "/v1/conversations/:id",
    {
      schema: {
        summary: "Read a conversation",
        ...common,
        params: conversationIdParamsSchema,
        response: { 200: conversationObjectSchema, ...errors },
      },
    },
    async (request) =>
      conversationObject(await conversations.get(request.subjectUid, request.params.id)),
  );

  app.post<{ Params: Params; Body: z.infer<typeof updateConversationBodySchema> }>(
    "/v1/conversations/:id",
    {
      schema: {
        summary: "Replace a conversation's metadata",
        ...common,
        params: conversationIdParamsSchema,
        body: updateConversationBodySchema,
        response: { 200: conversationObjectSchema, ...errors },
      },
    },
    async (request) =>
      conversationObject(
        await conversations.updateMetadata(
          request.subjectUid,
          request.params.id,
          request.body.metadata ?? {},
        ),
      ),
  );

  app.delete<{ Params: Params }>(
    "/v1/conversations/:id",
    {
      schema: {
        summary:
          "Delete a conversation (for the caller: the operator keeps its messages; its id is then not found)",
        ...common,
        params: conversationIdParamsSchema,
        response: { 200: conversationDeletedSchema, ...errors },
      },
    },
    async (request) => {
      await conversations.delete(request.subjectUid, request.params.id);
      return {
        id: request.params.id,
        object: "conversation.deleted" as const,
        deleted: true as const,
      };
    },
  );

  app.get<{ Params: Params; Querystring: z.infer<typeof itemListQuerySchema> }>(
    "/v1/conversations/:id/items",
    {
      schema: {
        summary: "List a conversation's items (newest first by default; page with after)",
        ...common,
        params: conversationIdParamsSchema,
        querystring: itemListQuerySchema,
        response: { 200: conversationItemListSchema, ...errors },
      },
    },
    async (request) => {
      const items = await conversationItems(conversations, request.subjectUid, request.params.id);
      return itemPage(items, request.query);
    },
  );

  app.post<{
    Params: Params;
    Body: z.infer<typeof createItemsBodySchema>;
    Querystring: z.infer<typeof includeQuerySchema>;
  }>(
    "/v1/conversations/:id/items",
    {
      schema: {
        summary: "Append items at the end of a conversation",
        ...common,
        params: conversationIdParamsSchema,
        querystring: includeQuerySchema,
        body: createItemsBodySchema,
        response: { 200: conversationItemListSchema, ...errors },
      },
    },
    async (request) => {
      const { subjectUid } = request;
      const { id } = request.params;
      const context = await conversations.chain(subjectUid, id, () => []);
      const stored = await conversations.append(
        subjectUid,
        id,
        await itemsToMessages(
          conversations.store,
          subjectUid,
          request.body.items,
          context.messages,
          imageUrls,
        ),
      );
      const images = await imageUrlsOf(conversations.store, subjectUid, stored);
      const data = stored.flatMap((message) => messageItemsWithImages(message, images));
      return {
        object: "list" as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        has_more: false,
      };
    },
  );

  app.get<{ Params: ItemParams; Querystring: z.infer<typeof includeQuerySchema> }>(
    "/v1/conversations/:id/items/:item_id",
    {
      schema: {
        summary: "Read one item of a conversation",
        ...common,
        params: conversationItemParamsSchema,
        querystring: includeQuerySchema,
        response: { 200: responseItemSchema, ...errors },
      },
    },
    async (request) =>
      conversationItem(
        conversations,
        request.subjectUid,
        request.params.id,
        request.params.item_id,
      ),
  );

  app.delete<{ Params: ItemParams }>(
    "/v1/conversations/:id/items/:item_id",
    {
      schema: {
        summary:
          "Delete an item of a conversation (for the caller: the operator keeps it); answers the conversation",
        ...common,
        params: conversationItemParamsSchema,
        response: { 200: conversationObjectSchema, ...errors },
      },
    },
    async (request) => {
      const { subjectUid } = request;
      const { id, item_id: itemId } = request.params;
      await conversationItem(conversations, subjectUid, id, itemId);
      await conversations.deleteItem(subjectUid, itemId);
      return conversationObject(await conversations.get(subjectUid, id));
    },
  );
}
