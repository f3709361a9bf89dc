import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isStorableText } from "verbatim-llm/internal";
import type { ConsoleService } from "../../gateway/console/service.js";
import { errorReplySchema } from "../errors.js";
import { listQuerySchema } from "./paging.js";

/**
 * Console: full-text search across every conversation's messages and every job's items, or one
 * subject's (docs/console.md, "Search"), newest first, paged.
 */
const searchQuerySchema = z.object({
  q: z
    .string()
    .min(1)
    .max(200)
    .refine(
      isStorableText,
      "the search text is well-formed Unicode without U+0000 (NUL), as every stored string",
    )
    .describe(
      "The text to find: a case-insensitive substring of a message's content or an item (any script, emoji included).",
    ),
  // The lists' subject filter, validated the same way (the same 400 when it is no subject).
  subject_uid: listQuerySchema.shape.subject_uid.describe(
    "Only this subject's messages and items (its uid, exactly).",
  ),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .max(2048)
    .optional()
    .describe(
      "next_cursor of the previous page: where the next one starts (by key, at any depth). Pass it with the same q and subject_uid.",
    ),
});

const searchReplySchema = z.object({
  data: z.array(
    z.object({
      kind: z.enum(["message", "item"]),
      conversation_id: z.string().nullable().describe("kind=message: its conversation"),
      message_id: z.string().nullable().describe("kind=message: the message"),
      job_id: z.string().nullable().describe("kind=item: its job"),
      turn_id: z.string().nullable().describe("kind=item: its turn"),
      item_key: z.string().nullable().describe("kind=item: the item's key"),
      subject_uid: z.string(),
      created_at: z.string(),
      snippet: z
        .string()
        .describe("Up to about 160 characters of the matching text around the first match."),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export function registerSearchConsoleRoutes(app: FastifyInstance, service: ConsoleService): void {
  app.get<{ Querystring: z.infer<typeof searchQuerySchema> }>(
    "/ai-gateway/search",
    {
      schema: {
        summary:
          "Full-text search across conversations' messages and jobs' items (optionally of one subject), newest first, paged",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        querystring: searchQuerySchema,
        response: { 200: searchReplySchema, 400: errorReplySchema, 401: errorReplySchema },
      },
    },
    async (request) => {
      const { q, subject_uid, limit, cursor } = request.query;
      return service.search({ query: q, subjectUid: subject_uid, limit, cursor });
    },
  );
}
