import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/index.js";
import { findJobOwner, listJobsForConsole } from "../../store/repositories/console-jobs.js";
import { errorReplySchema } from "../errors.js";
import { changeMarkOf, jobUsageSchema, trajectorySchema } from "./job-page.js";
import { modelUsageSchema } from "verbatim-llm/trajectory";
import { closingFlag, waitForNews, waitMsSchema } from "./long-poll.js";
import { jobReplySchema, turnReplySchema } from "../jobs/shapes.js";
import {
  decodeCursor,
  encodeCursor,
  listQuerySchema,
  pageLimitBytesSchema,
  projectionMetadataSchema,
  viewSchema,
} from "./paging.js";
import { instant, startsWith } from "../../store/repositories/console-queries.js";
import type { ConsolePages } from "./worker/pages.js";

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
export function registerJobConsoleRoutes(
  app: FastifyInstance,
  database: StoreDatabase,
  pages: ConsolePages,
): void {
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
      const { limit, subject_uid, status, conversation_id } = request.query;
      const offset = decodeCursor(request.query.cursor);
      const { subject_prefix, created_after, created_before } = request.query;
      const rows = await listJobsForConsole(database.db, {
        subjectUid: subject_uid,
        subjectLikePattern: subject_prefix === undefined ? undefined : startsWith(subject_prefix),
        createdAfter: created_after === undefined ? undefined : instant(created_after),
        createdBefore: created_before === undefined ? undefined : instant(created_before),
        status,
        conversationId: conversation_id,
        limit: limit + 1,
        offset,
      });
      return {
        data: rows.slice(0, limit).map((row) => ({
          ...row,
          attempts: Number(row.attempts),
          retry_budget: Number(row.retry_budget),
        })),
        next_cursor: rows.length > limit ? encodeCursor(offset + limit) : null,
      };
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
      const { id } = request.params;
      const owner = await findJobOwner(database.db, id);
      if (owner === undefined) {
        throw new VerbatimError("resource_not_found", `no job ${id}`, {
          where: id,
          hint: "List jobs with GET /background-agent-jobs",
        });
      }
      const { wait_for_change, wait_ms } = request.query;
      if (wait_for_change !== undefined && wait_ms > 0) {
        await waitForNews(
          async () => (await changeMarkOf(database, id)) !== wait_for_change,
          wait_ms,
          request.raw,
          closing,
        );
      }
      // Read and built in the console's worker thread when there is one.
      const body = await pages.jobPage({
        jobId: id,
        owner,
        view: request.query.view,
        pageLimitBytes: request.query.page_limit_bytes,
      });
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
}
