import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { JsonValue } from "verbatim-llm/core";
import type { BackgroundAgentJobs, GatewayMessageStore } from "../../gateway/index.js";
import type { StoredTurnItem } from "verbatim-llm/trajectory";
import { errorReplySchema } from "../errors.js";
import { metadataSchema } from "../../gateway/responses/schemas.js";
import { idempotencyKeySchema } from "../../gateway/validation/checks.js";
import {
  jobReply,
  jobReplySchema,
  storedItemSchema,
  turnReply,
  turnReplySchema,
  wakeEventReply,
  wakeEventReplySchema,
} from "../../gateway/jobs/shapes.js";

const errors = {
  400: errorReplySchema,
  401: errorReplySchema,
  404: errorReplySchema,
  409: errorReplySchema,
  413: errorReplySchema,
  429: errorReplySchema,
};
const security = [{ apiKey: [] }];
const tags = ["jobs"];

const idParams = z.object({ id: z.string().min(1).max(200) });
const idempotencyKey = idempotencyKeySchema
  .optional()
  .describe(
    "Makes a retry safe: the same key with the same request returns what the first request made; with another request it is 409.",
  );
const itemsSchema = z
  .array(
    z.object({
      item_key: z
        .string()
        .min(1)
        .max(200)
        .describe("Stable key; `client:` marks the caller's messages."),
      item: z.record(z.string(), z.unknown()).describe("One semantic item (docs/trajectories.md)."),
    }),
  )
  .max(1000);

const createJobBody = z.strictObject({
  conversation_id: z
    .string()
    .min(1)
    .max(200)
    .describe("The owning conversation: it gets the wake event."),
  retry_budget: z.int().min(0).max(100).default(0),
  metadata: metadataSchema.optional(),
  idempotency_key: idempotencyKey,
});
// Optional: a start without a body (as before keys existed) arrives as null.
const attemptBody = z
  .strictObject({ idempotency_key: idempotencyKey })
  .nullish()
  .describe("Optional: the body may be left out (no key).");
const finishJobBody = z.strictObject({
  status: z.enum(["succeeded", "failed", "cancelled"]),
  result: z
    .unknown()
    .optional()
    .describe("The job's result (succeeded): carried by the wake event."),
  error: z
    .string()
    .max(4000)
    .optional()
    .describe("Why the attempt failed or the job was cancelled."),
});
const itemsBody = z.strictObject({ items: itemsSchema });
const startTurnBody = z.strictObject({ items: itemsSchema, idempotency_key: idempotencyKey });
const finishTurnBody = z.strictObject({ status: z.enum(["completed", "failed", "cancelled"]) });
const claimBody = z.strictObject({
  conversation_id: z.string().min(1).max(200),
  consumer: z.string().min(1).max(200).describe("Who claims: each event is claimed exactly once."),
  limit: z.int().min(1).max(1000).default(100),
});

const turnWithItems = z.object({ turn: turnReplySchema, items: z.array(storedItemSchema) });

const itemsReply = (items: readonly StoredTurnItem[]) =>
  items.map((row) => ({ ...row, item: { ...row.item } as Record<string, unknown> }));

/** Job routes for callers (subject-scoped): create, attempts, turns, items, steer, finish, claim. */
export function registerJobCallerRoutes(
  app: FastifyInstance,
  jobs: BackgroundAgentJobs,
  store: GatewayMessageStore,
): void {
  app.post<{ Body: z.infer<typeof createJobBody> }>(
    "/v1/background-agent-jobs",
    {
      schema: {
        summary: "Create a job owned by a conversation",
        tags,
        security,
        body: createJobBody,
        response: { 200: jobReplySchema, ...errors },
      },
    },
    async (request) => {
      const { conversation_id, retry_budget, metadata, idempotency_key } = request.body;
      return jobReply(
        await jobs.createJob(request.subjectUid, {
          conversationId: conversation_id,
          retryBudget: retry_budget,
          ...(metadata === undefined ? {} : { metadata }),
          ...(idempotency_key === undefined ? {} : { idempotencyKey: idempotency_key }),
        }),
      );
    },
  );

  app.get<{ Params: z.infer<typeof idParams> }>(
    "/v1/background-agent-jobs/:id",
    {
      schema: {
        summary: "Read a job and its turns",
        tags,
        security,
        params: idParams,
        response: {
          200: z.object({ job: jobReplySchema, turns: z.array(turnReplySchema) }),
          ...errors,
        },
      },
    },
    async (request) => {
      const stored = await jobs.readTrajectory(request.subjectUid, request.params.id);
      return { job: jobReply(stored.job), turns: stored.turns.map(turnReply) };
    },
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof attemptBody> }>(
    "/v1/background-agent-jobs/:id/attempts",
    {
      schema: {
        summary: "Start the next attempt (queued → running; bounded by the retry budget)",
        tags,
        security,
        params: idParams,
        body: attemptBody,
        response: { 200: jobReplySchema, ...errors },
      },
    },
    async (request) =>
      jobReply(
        await jobs.startAttempt(
          request.subjectUid,
          request.params.id,
          request.body?.idempotency_key,
        ),
      ),
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof finishJobBody> }>(
    "/v1/background-agent-jobs/:id/finish",
    {
      schema: {
        summary:
          "Finish the running attempt: succeeded (with result), failed (retried while the budget allows) or cancelled",
        tags,
        security,
        params: idParams,
        body: finishJobBody,
        response: { 200: jobReplySchema, ...errors },
      },
    },
    async (request) => {
      const { status, result, error } = request.body;
      const subject = request.subjectUid;
      const id = request.params.id;
      if (status === "succeeded") {
        return jobReply(await jobs.completeJob(subject, id, (result ?? null) as JsonValue));
      }
      if (status === "failed")
        return jobReply(await jobs.failAttempt(subject, id, error ?? "failed"));
      return jobReply(await jobs.cancelJob(subject, id, error ?? "cancelled"));
    },
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof startTurnBody> }>(
    "/v1/background-agent-jobs/:id/turns",
    {
      schema: {
        summary: "Start the job's next turn, with its first items",
        tags,
        security,
        params: idParams,
        body: startTurnBody,
        response: { 200: turnWithItems, ...errors },
      },
    },
    async (request) => {
      const started = await jobs.startTurn(
        request.subjectUid,
        request.params.id,
        request.body.items,
        request.body.idempotency_key,
      );
      return { turn: turnReply(started.turn), items: itemsReply(started.items) };
    },
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof itemsBody> }>(
    "/v1/background-agent-job-turns/:id/items",
    {
      schema: {
        summary:
          "Append items to a running turn (idempotent per item_key; 409 when a key holds another item)",
        tags,
        security,
        params: idParams,
        body: itemsBody,
        response: { 200: z.object({ items: z.array(storedItemSchema) }), ...errors },
      },
    },
    async (request) => ({
      items: itemsReply(
        await jobs.appendItems(request.subjectUid, request.params.id, request.body.items),
      ),
    }),
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof itemsBody> }>(
    "/v1/background-agent-job-turns/:id/steer",
    {
      schema: {
        summary:
          "Steer or prompt a turn again: raises its revision and appends the caller's `client:` items (B8)",
        tags,
        security,
        params: idParams,
        body: itemsBody,
        response: { 200: turnWithItems, ...errors },
      },
    },
    async (request) => {
      const steered = await jobs.steerTurn(
        request.subjectUid,
        request.params.id,
        request.body.items,
      );
      return { turn: turnReply(steered.turn), items: itemsReply(steered.items) };
    },
  );

  app.post<{ Params: z.infer<typeof idParams>; Body: z.infer<typeof finishTurnBody> }>(
    "/v1/background-agent-job-turns/:id/finish",
    {
      schema: {
        summary: "End a running turn",
        tags,
        security,
        params: idParams,
        body: finishTurnBody,
        response: { 200: turnReplySchema, ...errors },
      },
    },
    async (request) =>
      turnReply(await jobs.finishTurn(request.subjectUid, request.params.id, request.body.status)),
  );

  app.post<{ Body: z.infer<typeof claimBody> }>(
    "/v1/background-agent-jobs/wake-events/claim",
    {
      schema: {
        summary: "Claim a conversation's unclaimed wake events (each exactly once, B11)",
        tags,
        security,
        body: claimBody,
        response: { 200: z.object({ data: z.array(wakeEventReplySchema) }), ...errors },
      },
    },
    async (request) => {
      const { conversation_id, consumer, limit } = request.body;
      // Scoping: the conversation must be this subject's (404 otherwise, like a missing one).
      await store.getConversation(request.subjectUid, conversation_id);
      const events = await jobs.claimWakeEvents(request.subjectUid, {
        consumer,
        limit,
        conversationId: conversation_id,
      });
      return { data: events.map(wakeEventReply) };
    },
  );
}
