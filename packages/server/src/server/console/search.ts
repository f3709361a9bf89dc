import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isStorableText } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/index.js";
import { searchConsole } from "../../store/repositories/console-search.js";
import { errorReplySchema } from "../errors.js";
import { decodeCursor, encodeCursor } from "./paging.js";

/**
 * Console: full-text search across every conversation's messages and every job's items
 * (docs/console.md, "Search"), newest first, paged.
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
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(100).optional(),
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

/** Fields whose values are labels or digests, not text a person wrote (left out of snippets). */
const NOT_TEXT = new Set(["type", "sha256", "mimeType", "execution_mechanism", "status", "kind"]);

/** The text of a stored JSON value: its strings (labels and digests left out), joined by spaces. */
function textOf(json: string): string {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === "object" && value !== null) {
      for (const [key, one] of Object.entries(value)) if (!NOT_TEXT.has(key)) walk(one);
    }
  };
  try {
    walk(JSON.parse(json));
  } catch {
    return json;
  }
  return strings.join(" ");
}

export function snippetOf(json: string, query: string): string {
  const text = textOf(json);
  const at = text.toLowerCase().indexOf(query.toLowerCase());
  const start = Math.max(0, (at < 0 ? 0 : at) - 60);
  const characters = [...text.slice(start, start + 200)].slice(0, 160).join("");
  return `${start > 0 ? "…" : ""}${characters}${start + characters.length < text.length ? "…" : ""}`;
}

export function registerSearchConsoleRoutes(app: FastifyInstance, database: StoreDatabase): void {
  app.get<{ Querystring: z.infer<typeof searchQuerySchema> }>(
    "/ai-gateway/search",
    {
      schema: {
        summary:
          "Full-text search across conversations' messages and jobs' items, newest first, paged",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        querystring: searchQuerySchema,
        response: { 200: searchReplySchema, 400: errorReplySchema, 401: errorReplySchema },
      },
    },
    async (request) => {
      const { q, limit } = request.query;
      const offset = decodeCursor(request.query.cursor);
      const rows = await searchConsole(database.db, database.capabilities, {
        query: q,
        limit: limit + 1,
        offset,
      });
      return {
        data: rows.slice(0, limit).map((row) => ({
          kind: row.kind,
          conversation_id: row.kind === "message" ? row.parent_id : null,
          message_id: row.kind === "message" ? row.id : null,
          job_id: row.kind === "item" ? row.parent_id : null,
          turn_id: row.turn_id,
          item_key: row.kind === "item" ? row.id : null,
          subject_uid: row.subject_uid,
          created_at: row.created_at,
          snippet: snippetOf(row.body, q),
        })),
        next_cursor: rows.length > limit ? encodeCursor(offset + limit) : null,
      };
    },
  );
}
