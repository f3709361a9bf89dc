import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { modelUsageSchema } from "verbatim-llm/internal";
import { jobUsageSchema, trajectorySchema } from "../../gateway/console/job-page.js";
import type { ConsoleService } from "../../gateway/console/service.js";
import { jobReplySchema, turnReplySchema } from "../../gateway/jobs/shapes.js";
import { errorReplySchema } from "../errors.js";
import { closingFlag, waitMsSchema, whileHeld } from "./long-poll.js";
import { listQuerySchema, pageLimitBytesSchema, viewSchema } from "./paging.js";

const errors = { 400: errorReplySchema, 401: errorReplySchema, 404: errorReplySchema };

const jobListQuerySchema = listQuerySchema.extend({
  status: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]).optional(),
  conversation_id: z.string().min(1).max(200).optional(),
});

const jobListSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      subject_uid: z.string(),
      conversation_id: z.string(),
      status: z.string(),
      attempts: z.int(),
      retry_budget: z.int(),
      created_at: z.string(),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

const jobQuerySchema = z.object({
  view: viewSchema,
  page_limit_bytes: pageLimitBytesSchema,
  wait_for_change: z
    .string()
    .max(100)
    .optional()
    .describe(
      "Long polling (live updates): answer only once the job's change_mark differs from this one (a status, a turn, new items), or wait_ms has passed.",
    ),
  wait_ms: waitMsSchema("wait_for_change"),
});

const jobDetailSchema = z.object({
  change_mark: z
    .string()
    .describe("Changes whenever the job or its turns do: pass it as wait_for_change."),
  job: jobReplySchema,
  usage: jobUsageSchema,
  turns: z.array(
    turnReplySchema.extend({
      usage: modelUsageSchema
        .nullable()
        .describe("The sum of the usage the turn's items carry (one per model call)."),
      trajectory: trajectorySchema,
    }),
  ),
});

/** Console: jobs and each turn's trajectory in the three views (B14). */
export function registerJobConsoleRoutes(app: FastifyInstance, service: ConsoleService): void {
  // Held requests (long polling) answer at once when the server starts closing.
  const closing = closingFlag(app);
  app.get<{ Querystring: z.infer<typeof jobListQuerySchema> }>(
    "/background-agent-jobs",
    {
      schema: {
        summary: "List background agent jobs, newest first",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        querystring: jobListQuerySchema,
        response: { 200: jobListSchema, ...errors },
      },
    },
    async (request) => {
      const { limit, subject_uid, subject_prefix, created_after, created_before, cursor } =
        request.query;
      return service.listJobs({
        subjectUid: subject_uid,
        subjectPrefix: subject_prefix,
        createdAfter: created_after,
        createdBefore: created_before,
        status: request.query.status,
        conversationId: request.query.conversation_id,
        limit,
        cursor,
      });
    },
  );

  app.get<{ Params: { id: string }; Querystring: z.infer<typeof jobQuerySchema> }>(
    "/background-agent-jobs/:id",
    {
      schema: {
        summary: "A job, its turns, and each turn's trajectory: stored, ChatML or model-visible",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        params: z.object({ id: z.string().min(1).max(200) }),
        querystring: jobQuerySchema,
        response: { 200: jobDetailSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { view, page_limit_bytes, wait_for_change, wait_ms } = request.query;
      // Read and built in the console's worker thread when there is one.
      const body = await whileHeld(request.raw, closing, (stop) =>
        service.jobPage({
          jobId: request.params.id,
          view,
          pageLimitBytes: page_limit_bytes,
          wait:
            wait_for_change === undefined
              ? undefined
              : { forChange: wait_for_change, ms: wait_ms, stop },
        }),
      );
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
}
