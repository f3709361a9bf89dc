import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import { compressContext, type GatewayMessageStore } from "../../gateway/index.js";
import { errorReplySchema } from "../errors.js";
import { metadataSchema } from "../../gateway/responses/schemas.js";
import { responseIdParamsSchema } from "../responses/route-schemas.js";
import { subjectSummarizer } from "../../gateway/responses/summarizer.js";
import { NO_UPSTREAM, type UpstreamConfig } from "../../gateway/upstream/config.js";

const compressBodySchema = z
  .strictObject({
    summary: z
      .string()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe("The summary, when the caller wrote it."),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Else a model writes it: the model's name (routed like POST /v1/responses)."),
    metadata: metadataSchema.optional(),
    idempotency_key: z.string().min(1).max(200).optional(),
  })
  .refine((body) => (body.summary === undefined) !== (body.model === undefined), {
    message: "pass exactly one of summary (the text) and model (a model writes it)",
    path: ["summary"],
  });

const compressReplySchema = z.object({
  id: z.string().describe("The summary's id: pass it as previous_response_id to continue."),
  object: z.literal("response.compaction"),
  previous_response_id: z.string().describe("The anchor that was compressed."),
  conversation_id: z.string(),
  summary: z.string(),
  replaced_message_count: z.int(),
  created_at: z.number(),
});

/** POST /v1/responses/:id/compress (B6). */
export function registerCompressRoute(
  app: FastifyInstance,
  store: GatewayMessageStore,
  upstream: UpstreamConfig | undefined,
): void {
  app.post<{
    Params: z.infer<typeof responseIdParamsSchema>;
    Body: z.infer<typeof compressBodySchema>;
  }>(
    "/v1/responses/:id/compress",
    {
      schema: {
        summary: "Compress the context of a response into a summary that starts a new context",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        params: responseIdParamsSchema,
        body: compressBodySchema,
        response: {
          200: compressReplySchema,
          400: errorReplySchema,
          401: errorReplySchema,
          404: errorReplySchema,
          409: errorReplySchema,
          502: errorReplySchema,
          503: errorReplySchema,
        },
      },
    },
    async (request) => {
      const { summary, model, metadata, idempotency_key } = request.body;
      const summaryMessage = await compressContext(store, request.subjectUid, {
        anchorId: request.params.id,
        ...(summary === undefined ? {} : { summary }),
        ...(model === undefined
          ? {}
          : {
              summarizer: subjectSummarizer(
                store,
                upstream ?? NO_UPSTREAM,
                request.subjectUid,
                model,
              ),
            }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(idempotency_key === undefined ? {} : { idempotencyKey: idempotency_key }),
      });
      const text = summaryMessage.content[0];
      if (text?.type !== "text") {
        throw new VerbatimError("internal_error", "the stored summary has no text");
      }
      return {
        id: summaryMessage.id,
        object: "response.compaction" as const,
        previous_response_id: request.params.id,
        conversation_id: summaryMessage.conversationId,
        summary: text.text,
        replaced_message_count: summaryMessage.metadata.gateway.compression?.messageCount ?? 0,
        created_at: Math.floor(Date.parse(summaryMessage.createdAt) / 1000),
      };
    },
  );
}
