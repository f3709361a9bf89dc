import { z } from "zod";
import {
  inputItemSchema,
  metadataSchema,
  responseItemSchema,
} from "../../gateway/responses/schemas.js";

/**
 * The Conversations API shapes (OpenAI's `/v1/conversations`), field for field, so the
 * official clients' `conversations.*` calls work unchanged.
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

export const updateConversationBodySchema = z
  .object({ metadata: metadataSchema.nullable() })
  .describe("POST /v1/conversations/:id: replaces the conversation's metadata.");

export const createItemsBodySchema = z
  .object({ items: itemsSchema.min(1) })
  .describe("POST /v1/conversations/:id/items: appends items at the end of the conversation.");

export const conversationItemListSchema = z.object({
  object: z.literal("list"),
  data: z.array(responseItemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

export const conversationIdParamsSchema = z.object({ id: z.string().min(1).max(200) });
export const conversationItemParamsSchema = z.object({
  id: z.string().min(1).max(200),
  item_id: z.string().min(1).max(200),
});

/** `include` is accepted and has nothing to add: every item is given whole. */
const includeSchema = z.union([z.string(), z.array(z.string())]).optional();

export const itemListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().min(1).max(200).optional(),
  include: includeSchema,
});

export const includeQuerySchema = z.object({ include: includeSchema });
