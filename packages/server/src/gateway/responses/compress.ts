import { VerbatimError } from "verbatim-llm/core";
import { z } from "zod";
import { compressContext } from "../conversations/compression.js";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import { NO_UPSTREAM, type UpstreamConfig } from "../upstream/config.js";
import { metadataSchema } from "./schemas.js";
import { subjectSummarizer } from "./summarizer.js";

/** POST /v1/responses/:id/compress's body: the summary, or the model that writes it. */
export const compressBodySchema = z
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
export type CompressBody = z.infer<typeof compressBodySchema>;

export const compressReplySchema = z.object({
  id: z.string().describe("The summary's id: pass it as previous_response_id to continue."),
  object: z.literal("response.compaction"),
  previous_response_id: z.string().describe("The anchor that was compressed."),
  conversation_id: z.string(),
  summary: z.string(),
  replaced_message_count: z.int(),
  created_at: z.number(),
});
export type CompressReply = z.infer<typeof compressReplySchema>;

/**
 * Compresses the context of a response into a summary that starts a new context (B6): the
 * caller's summary, or one a model writes over the context and the subject's kept images.
 */
export async function compressResponse(
  store: GatewayMessageStore,
  upstream: UpstreamConfig | undefined,
  subject: string,
  responseId: string,
  body: CompressBody,
): Promise<CompressReply> {
  const { summary, model, metadata, idempotency_key } = body;
  const summaryMessage = await compressContext(store, subject, {
    anchorId: responseId,
    ...(summary === undefined ? {} : { summary }),
    ...(model === undefined
      ? {}
      : { summarizer: subjectSummarizer(store, upstream ?? NO_UPSTREAM, subject, model) }),
    ...(metadata === undefined ? {} : { metadata }),
    ...(idempotency_key === undefined ? {} : { idempotencyKey: idempotency_key }),
  });
  const text = summaryMessage.content[0];
  if (text?.type !== "text") {
    throw new VerbatimError("internal_error", "the stored summary has no text");
  }
  return {
    id: summaryMessage.id,
    object: "response.compaction",
    previous_response_id: responseId,
    conversation_id: summaryMessage.conversationId,
    summary: text.text,
    replaced_message_count: summaryMessage.metadata.gateway.compression?.messageCount ?? 0,
    created_at: Math.floor(Date.parse(summaryMessage.createdAt) / 1000),
  };
}
