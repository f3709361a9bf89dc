import { z } from "zod";

/**
 * The Conversations API routes' path and query schemas; the bodies and answers are the
 * gateway's (gateway/responses/conversation-schemas.ts).
 */

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
