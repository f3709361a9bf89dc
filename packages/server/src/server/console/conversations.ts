import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/index.js";
import { errorReplySchema } from "../errors.js";
import { closingFlag, waitForNews, waitMsSchema } from "./long-poll.js";
import {
  decodeCursor,
  encodeCursor,
  listQuerySchema,
  pageLimitBytesSchema,
  projectionMetadataSchema,
  viewSchema,
} from "./paging.js";
import {
  conversationOwner,
  countMessages,
  instant,
  latestMessageId,
  listConversations,
} from "../../store/repositories/console-queries.js";
import { modelInputSchema } from "./model-input.js";
import { storedMessageSchema } from "./stored-message.js";
import type { ConsolePages } from "./worker/pages.js";

const errors = { 400: errorReplySchema, 401: errorReplySchema, 404: errorReplySchema };

const conversationListSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      subject_uid: z.string(),
      created_at: z.string(),
      message_count: z.int(),
      last_message_at: z.string().nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

const conversationListQuerySchema = listQuerySchema.extend({
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Only conversations with a message answered by this model."),
});

const messagesQuerySchema = z.object({
  view: viewSchema,
  anchor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "Show the model-visible context of this message (its chain back to the start or the last summary). Without it: stored and chatml list every message in the order written; model-visible shows the context of the newest message.",
    ),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(100).optional(),
  page_limit_bytes: pageLimitBytesSchema,
  wait_for_more_than: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe(
      "Long polling (live updates, without anchor): answer only once this page holds more than this many messages, or wait_ms has passed.",
    ),
  wait_ms: waitMsSchema("wait_for_more_than"),
});

const chatMLMessageSchema = z
  .record(z.string(), z.unknown())
  .describe("A canonical ChatML message.");

const messagesReplySchema = z.object({
  view: z.enum(["stored", "chatml", "model-visible"]),
  conversation_id: z.string(),
  subject_uid: z.string(),
  anchor: z.string().nullable(),
  messages: z.array(z.union([storedMessageSchema, chatMLMessageSchema])),
  metadata: projectionMetadataSchema,
  next_cursor: z.string().nullable(),
  model_input: modelInputSchema
    .nullable()
    .optional()
    .describe(
      "view=model-visible: the instructions, tools and output limit of the request that produced the context's newest response (null when none was recorded); what the model received besides the messages.",
    ),
});

function notFound(id: string): VerbatimError {
  return new VerbatimError("resource_not_found", `no conversation ${id}`, {
    where: id,
    hint: "List conversations with GET /ai-gateway/conversations",
  });
}

/** Console: conversations and their messages in the three views (B14). */
export function registerConversationConsoleRoutes(
  app: FastifyInstance,
  database: StoreDatabase,
  pages: ConsolePages,
): void {
  // Held requests (long polling) answer at once when the server starts closing.
  const closing = closingFlag(app);
  app.get<{ Querystring: z.infer<typeof conversationListQuerySchema> }>(
    "/ai-gateway/conversations",
    {
      schema: {
        summary: "List gateway conversations, newest first (optionally of one subject)",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        querystring: conversationListQuerySchema,
        response: { 200: conversationListSchema, ...errors },
      },
    },
    async (request) => {
      const offset = decodeCursor(request.query.cursor);
      const { limit, subject_uid, subject_prefix, model, created_after, created_before } =
        request.query;
      const rows = await listConversations(database, {
        subjectUid: subject_uid,
        subjectPrefix: subject_prefix,
        model,
        createdAfter: created_after === undefined ? undefined : instant(created_after),
        createdBefore: created_before === undefined ? undefined : instant(created_before),
        limit: limit + 1,
        offset,
      });
      return {
        data: rows.slice(0, limit),
        next_cursor: rows.length > limit ? encodeCursor(offset + limit) : null,
      };
    },
  );

  app.get<{ Params: { id: string }; Querystring: z.infer<typeof messagesQuerySchema> }>(
    "/ai-gateway/conversations/:id/messages",
    {
      schema: {
        summary: "A conversation's messages: stored, ChatML or model-visible, paged",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        params: z.object({ id: z.string().min(1).max(200) }),
        querystring: messagesQuerySchema,
        response: { 200: messagesReplySchema, ...errors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { view, limit, page_limit_bytes } = request.query;
      const subject = await conversationOwner(database, id);
      if (subject === undefined) throw notFound(id);
      let anchor = request.query.anchor ?? null;
      if (anchor === null && view === "model-visible")
        anchor = (await latestMessageId(database, id)) ?? null;
      const offset = decodeCursor(request.query.cursor);
      const { wait_for_more_than, wait_ms } = request.query;
      if (anchor === null && wait_for_more_than !== undefined && wait_ms > 0) {
        const count = offset + wait_for_more_than;
        await waitForNews(
          async () => (await countMessages(database, id)) > count,
          wait_ms,
          request.raw,
          closing,
        );
      }
      // Read, projected, cut and serialized in the console's worker thread when there is one.
      const body = await pages.conversationPage({
        conversationId: id,
        subject,
        view,
        anchor,
        offset,
        limit,
        pageLimitBytes: page_limit_bytes,
      });
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
}
