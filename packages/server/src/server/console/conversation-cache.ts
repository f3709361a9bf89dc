import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ConsoleService } from "../../gateway/console/service.js";
import { errorReplySchema } from "../errors.js";

export const usageSchema = z.object({
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  cache_read_tokens: z.number().nullable(),
  cache_write_tokens: z.number().nullable(),
});

const differenceSchema = z
  .object({
    path: z.string(),
    reason: z.string(),
    message_index: z.number().nullable(),
    before: z.string(),
    after: z.string(),
  })
  .nullable();

/** A recorded call's cache verdict, as GET /ai-gateway/recorded-calls/:id gives it. */
export const cacheVerdictSchema = z.object({
  status: z.enum(["first", "kept", "broken", "unreadable"]),
  hit_ratio: z.number().nullable(),
  lost_tokens: z.number(),
  lost_dollars: z.number().nullable(),
  difference: differenceSchema,
});

const callSchema = z.object({
  call_id: z.string(),
  links: z
    .object({ call: z.string(), request: z.string(), response: z.string() })
    .describe("The call's facts and its exact bytes (GET /ai-gateway/recorded-calls/:id…)."),
  created_at: z.string(),
  model: z.string(),
  path: z.string(),
  status_code: z.number(),
  message_count: z.number(),
  matched_count: z.number(),
  previous_call_id: z.string().nullable(),
  usage: usageSchema,
  cache: z.enum(["first", "kept", "broken", "unreadable"]),
  hit_ratio: z.number().nullable(),
  lost_tokens: z.number(),
  lost_dollars: z.number().nullable(),
  difference: differenceSchema,
});

const cacheReplySchema = z.object({
  summary: z.object({
    conversation_id: z.string(),
    subject_uid: z.string(),
    calls: z.number(),
    hit_ratio: z.number().nullable(),
    lost_tokens: z.number(),
    lost_dollars: z.number().nullable(),
    breaks: z.array(z.object({ call_id: z.string(), path: z.string(), reason: z.string() })),
  }),
  calls: z.array(callSchema),
});

/**
 * GET /ai-gateway/conversations/:id/cache: a recorded conversation's calls with their usage and
 * whether each kept the cacheable prefix of the previous call of its chain (docs/server/recorded-calls.md,
 * "Cache report").
 */
export function registerConversationCacheRoute(
  app: FastifyInstance,
  service: ConsoleService,
): void {
  app.get<{ Params: { id: string } }>(
    "/ai-gateway/conversations/:id/cache",
    {
      schema: {
        summary:
          "A recorded conversation's calls: usage, cache hit ratio, and where the cacheable prefix broke",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        params: z.object({ id: z.string().min(1).max(200) }),
        response: { 200: cacheReplySchema, 401: errorReplySchema, 404: errorReplySchema },
      },
    },
    async (request) => service.cacheReport(request.params.id),
  );
}
