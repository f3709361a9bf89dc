import { z } from "zod";
import { responseItemSchema } from "../../gateway/responses/schemas.js";

/**
 * The HTTP shapes of the Responses routes that are not the API's objects: the `:id` path
 * parameter, the query of GET /v1/responses/:id/input_items and the page it answers (the
 * objects themselves are gateway/responses/schemas.ts).
 */
export const inputItemListSchema = z.object({
  object: z.literal("list"),
  data: z.array(responseItemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

export const inputItemsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().optional(),
  before: z.string().optional(),
});

export const responseIdParamsSchema = z.object({ id: z.string().min(1).max(200) });
