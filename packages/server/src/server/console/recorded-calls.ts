import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ConsoleService } from "../../gateway/console/service.js";
import { errorReplySchema } from "../errors.js";
import { cacheVerdictSchema, usageSchema } from "./conversation-cache.js";

const errors = { 401: errorReplySchema, 404: errorReplySchema };
const params = z.object({ id: z.string().min(1).max(200) });
const factsSchema = z.object({
  id: z.string(),
  subject_uid: z.string(),
  conversation_id: z.string().nullable().describe("Null until the call is placed in a chain."),
  previous_call_id: z.string().nullable(),
  wire_format: z.string().describe("anthropic-messages, openai-chat or gemini-generate-content."),
  path: z.string().describe("The request path with its query, as sent."),
  model: z.string(),
  status_code: z.number().describe("The upstream's status."),
  created_at: z.string(),
  duration_ms: z.number(),
  redacted: z.boolean().describe("Both bodies went through the trajectory sanitizer."),
  request_headers: z
    .record(z.string(), z.string())
    .describe("The request's headers as recorded: credentials are never stored."),
  response_headers: z.record(z.string(), z.string()),
  usage: usageSchema,
  message_count: z.number(),
  matched_count: z.number(),
  request_bytes: z.number(),
  response_bytes: z.number().describe("As received, still content-encoded."),
  links: z.object({ request: z.string(), response: z.string() }),
  cache: cacheVerdictSchema.describe(
    "Whether the prompt cache could hit this call, against its previous call (as the conversation's cache report says).",
  ),
});

/**
 * Console: a recorded call (a pass-through call of /v1/messages or /v1/chat/completions) and
 * its exact bytes (docs/server/recorded-calls.md, "Reading a recorded call back").
 */
export function registerRecordedCallRoutes(app: FastifyInstance, service: ConsoleService): void {
  app.get<{ Params: { id: string } }>(
    "/ai-gateway/recorded-calls/:id",
    {
      schema: {
        summary:
          "A recorded call's facts: wire format, path, model, status, headers without credentials, usage, duration, conversation, previous call, sizes",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        params,
        response: { 200: factsSchema, ...errors },
      },
    },
    async (request) => service.recordedCall(request.params.id),
  );
  for (const which of ["request", "response"] as const) {
    app.get<{ Params: { id: string } }>(
      `/ai-gateway/recorded-calls/:id/${which}`,
      {
        schema: {
          summary:
            which === "request"
              ? "A recorded call's request body, byte for byte as the client sent it"
              : "A recorded call's response body, byte for byte as the upstream sent it (still content-encoded)",
          tags: ["console"],
          security: [{ operatorToken: [] }],
          params,
          response: {
            200: z
              .unknown()
              .describe(
                which === "request"
                  ? "The bytes with the recorded content type."
                  : "The bytes with the recorded content type and content encoding (an SSE stream's events as they arrived).",
              ),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const body = await service.recordedCallBody(request.params.id, which);
        reply.header("content-type", body.contentType);
        if (body.contentEncoding !== undefined)
          reply.header("content-encoding", body.contentEncoding);
        // Bytes for an operator to read, never a page to render: nothing runs, nothing is sniffed.
        return reply
          .header("content-security-policy", "default-src 'none'; sandbox")
          .header("content-disposition", `attachment; filename="${request.params.id}-${which}"`)
          .send(body.bytes);
      },
    );
  }
}
