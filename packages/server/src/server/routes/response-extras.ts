import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import type { GatewayConversations } from "../../gateway/conversations/conversations.js";
import type { GatewayMessageStore } from "../../gateway/index.js";
import type { ConversationsService } from "../../gateway/responses/conversation-service.js";
import { errorReplySchema } from "../errors.js";
import { responseIdParamsSchema } from "../responses/route-schemas.js";
import type { UpstreamConfig } from "../../gateway/upstream/config.js";
import {
  inputTokensBodySchema,
  inputTokensReplySchema,
  responseInputTokens,
  type InputTokensBody,
} from "../../gateway/responses/input-tokens.js";
import { z } from "zod";

const errors = {
  400: errorReplySchema,
  401: errorReplySchema,
  404: errorReplySchema,
  429: errorReplySchema,
  502: errorReplySchema,
  503: errorReplySchema,
};

const responseDeletedSchema = z.object({
  id: z.string(),
  object: z.literal("response.deleted"),
  deleted: z.literal(true),
});

/** Routes naming a stored response by `:id`: a deleted one is answered as missing. */
const RESPONSE_ID_ROUTES = new Set([
  "/v1/responses/:id",
  "/v1/responses/:id/input_items",
  "/v1/responses/:id/cancel",
  "/v1/responses/:id/compress",
]);

/**
 * A preHandler for the caller routes: a response the subject deleted (or one in a conversation
 * it deleted) is not found on the routes that read it, continue it or name its conversation.
 */
export function hideDeletedResponses(service: ConversationsService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const url = request.routeOptions.url ?? "";
    if (RESPONSE_ID_ROUTES.has(url)) {
      const { id } = request.params as { id: string };
      if (id === "input_tokens") {
        // The path of POST /v1/responses/input_tokens, not a response id.
        reply.header("allow", "POST");
        throw new VerbatimError(
          "method_not_allowed",
          `/v1/responses/input_tokens does not take ${request.method}`,
          { where: "method", hint: "Use POST", details: { allowed_methods: ["POST"] } },
        );
      }
      await service.conversations.checkResponseVisible(request.subjectUid, id);
      return;
    }
    if (url === "/v1/responses" && request.method === "POST") {
      await service.checkContinuable(
        request.subjectUid,
        request.body as Parameters<ConversationsService["checkContinuable"]>[1],
      );
    }
  };
}

/**
 * A preSerialization hook for the caller routes: the input items of a response leave out the
 * items the subject deleted through the Conversations API (the page's ids follow what is left).
 */
export function hideDeletedInputItems(service: ConversationsService) {
  return async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    if (request.routeOptions.url !== "/v1/responses/:id/input_items") return payload;
    const list = payload as { data?: readonly { readonly id: string }[] } | null;
    return list === null ? payload : service.visibleInputItems(request.subjectUid, list);
  };
}

/**
 * DELETE /v1/responses/:id (a tombstone: the operator keeps it) and POST
 * /v1/responses/input_tokens.
 */
export function registerResponseExtraRoutes(
  app: FastifyInstance,
  options: {
    readonly conversations: GatewayConversations;
    readonly store: GatewayMessageStore;
    readonly upstream: UpstreamConfig;
  },
): void {
  const { conversations, store, upstream } = options;
  app.delete<{ Params: z.infer<typeof responseIdParamsSchema> }>(
    "/v1/responses/:id",
    {
      schema: {
        summary:
          "Delete a stored response (for the caller: the operator keeps it; its id is then not found)",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        params: responseIdParamsSchema,
        response: { 200: responseDeletedSchema, ...errors },
      },
    },
    async (request) => {
      await conversations.deleteResponse(request.subjectUid, request.params.id);
      return {
        id: request.params.id,
        object: "response.deleted" as const,
        deleted: true as const,
      };
    },
  );

  app.post<{ Body: InputTokensBody }>(
    "/v1/responses/input_tokens",
    {
      schema: {
        summary:
          "Count a response's input tokens (the upstream's count where it has one, else an estimate; see verbatim_count)",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        body: inputTokensBodySchema,
        response: { 200: inputTokensReplySchema, ...errors },
      },
    },
    async (request) =>
      responseInputTokens({ conversations, store, upstream }, request.subjectUid, request.body),
  );
}
