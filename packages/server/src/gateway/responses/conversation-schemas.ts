import { z } from "zod";
import { inputItemSchema, metadataSchema, responseItemSchema } from "./schemas.js";

/**
 * The Conversations API shapes (OpenAI's `/v1/conversations`), field for field, so the
 * official clients' `conversations.*` calls work unchanged: the bodies the service takes and the
 * objects it answers (the routes' path and query schemas are server/routes/conversation-schemas.ts).
 */
export const conversationObjectSchema = z
  .object({
    id: z.string().describe("The conversation's id (conv_…); pass it as `conversation`."),
    object: z.literal("conversation"),
    created_at: z.number().describe("Unix seconds."),
    metadata: z.record(z.string(), z.string()),
  })
  .describe("A conversation, in the shape of OpenAI's Conversations API.");
export type ConversationObject = z.infer<typeof conversationObjectSchema>;

export const conversationDeletedSchema = z.object({
  id: z.string(),
  object: z.literal("conversation.deleted"),
  deleted: z.literal(true),
});
export type ConversationDeleted = z.infer<typeof conversationDeletedSchema>;

const itemsSchema = z
  .array(inputItemSchema)
  .max(20, "at most 20 items at a time")
  .describe("Items as the Responses API's input items; at most 20 at a time.");

export const createConversationBodySchema = z
  .object({
    items: itemsSchema.nullish(),
    metadata: metadataSchema.nullish(),
  })
  .describe("POST /v1/conversations: a new conversation, with its first items when given.");
export type CreateConversationBody = z.infer<typeof createConversationBodySchema>;

export const updateConversationBodySchema = z
  .object({ metadata: metadataSchema.nullable() })
  .describe("POST /v1/conversations/:id: replaces the conversation's metadata.");
export type UpdateConversationBody = z.infer<typeof updateConversationBodySchema>;

export const createItemsBodySchema = z
  .object({ items: itemsSchema.min(1) })
  .describe("POST /v1/conversations/:id/items: appends items at the end of the conversation.");
export type CreateItemsBody = z.infer<typeof createItemsBodySchema>;

export const conversationItemListSchema = z.object({
  object: z.literal("list"),
  data: z.array(responseItemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});
export type ConversationItemList = z.infer<typeof conversationItemListSchema>;

/** How a page of a conversation's items is asked for (GET /v1/conversations/:id/items). */
export interface ItemPageQuery {
  readonly limit: number;
  readonly order: "asc" | "desc";
  readonly after?: string | undefined;
}
