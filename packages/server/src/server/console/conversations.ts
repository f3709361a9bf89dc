import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ConsoleService } from "../../gateway/console/service.js";
import { modelInputSchema } from "../../gateway/console/model-input.js";
import { projectionMetadataSchema } from "../../gateway/console/project-in-slices.js";
import { storedMessageSchema } from "../../gateway/console/stored-message.js";
import { errorReplySchema } from "../errors.js";
import { closingFlag, waitMsSchema, whileHeld } from "./long-poll.js";
import { listQuerySchema, pageLimitBytesSchema, viewSchema } from "./paging.js";

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

/** Console: conversations and their messages in the three views (B14). */
export function registerConversationConsoleRoutes(
  app: FastifyInstance,
  service: ConsoleService,
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
      const { limit, subject_uid, subject_prefix, model, created_after, created_before, cursor } =
        request.query;
      return service.listConversations({
        subjectUid: subject_uid,
        subjectPrefix: subject_prefix,
        model,
        createdAfter: created_after,
        createdBefore: created_before,
        limit,
        cursor,
      });
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
      const { view, anchor, limit, cursor, page_limit_bytes } = request.query;
      const { wait_for_more_than, wait_ms } = request.query;
      // Read, projected, cut and serialized in the console's worker thread when there is one.
      const body = await whileHeld(request.raw, closing, (stop) =>
        service.conversationPage({
          conversationId: request.params.id,
          view,
          anchor,
          limit,
          cursor,
          pageLimitBytes: page_limit_bytes,
          wait:
            wait_for_more_than === undefined
              ? undefined
              : { forMoreThan: wait_for_more_than, ms: wait_ms, stop },
        }),
      );
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
}
