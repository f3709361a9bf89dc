import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { errorReplySchema } from "../errors.js";
import type { ConversationsService } from "../../gateway/responses/conversation-service.js";
import {
  conversationDeletedSchema,
  conversationItemListSchema,
  conversationObjectSchema,
  createConversationBodySchema,
  createItemsBodySchema,
  updateConversationBodySchema,
} from "../../gateway/responses/conversation-schemas.js";
import { responseItemSchema } from "../../gateway/responses/schemas.js";
import {
  conversationIdParamsSchema,
  conversationItemParamsSchema,
  includeQuerySchema,
  itemListQuerySchema,
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
 * the messages of its current chain. Each route parses the request and calls the gateway's
 * service (gateway/responses/conversation-service.ts); deleting is a tombstone.
 */
export function registerConversationRoutes(
  app: FastifyInstance,
  conversations: ConversationsService,
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
    async (request) => conversations.create(request.subjectUid, request.body),
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
    async (request) => conversations.get(request.subjectUid, request.params.id),
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
      conversations.updateMetadata(request.subjectUid, request.params.id, request.body.metadata),
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
    async (request) => conversations.delete(request.subjectUid, request.params.id),
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
    async (request) =>
      conversations.listItems(request.subjectUid, request.params.id, request.query),
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
    async (request) =>
      conversations.appendItems(request.subjectUid, request.params.id, request.body),
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
      conversations.getItem(request.subjectUid, request.params.id, request.params.item_id),
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
    async (request) =>
      conversations.deleteItem(request.subjectUid, request.params.id, request.params.item_id),
  );
}
