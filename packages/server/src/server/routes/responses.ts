import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { errorReplySchema } from "../errors.js";
import { createResponseBodySchema, responseObjectSchema } from "../../gateway/responses/schemas.js";
import {
  inputItemListSchema,
  inputItemsQuerySchema,
  responseIdParamsSchema,
} from "../responses/route-schemas.js";
import type { ResponsesService } from "../../gateway/responses/service.js";
import { StreamingResponseWriter } from "../responses/stream-writer.js";
import { retrieveResponseQuerySchema, sendReplay } from "./response-replay.js";

const errors = {
  400: errorReplySchema,
  401: errorReplySchema,
  404: errorReplySchema,
  409: errorReplySchema,
  413: errorReplySchema,
  429: errorReplySchema,
  502: errorReplySchema,
  503: errorReplySchema,
  504: errorReplySchema,
};

/**
 * POST /v1/responses, GET /v1/responses/:id, GET /v1/responses/:id/input_items,
 * POST /v1/responses/:id/cancel.
 */
export function registerResponseRoutes(app: FastifyInstance, service: ResponsesService): void {
  app.post<{ Body: z.infer<typeof createResponseBodySchema> }>(
    "/v1/responses",
    {
      schema: {
        summary: "Create a response (continues previous_response_id; stream: true for SSE)",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        body: createResponseBodySchema,
        response: { 200: responseObjectSchema, ...errors },
      },
    },
    async (request, reply) => {
      // A client that hangs up before its answer was sent stops the upstream call.
      const clientGone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) clientGone.abort();
      };
      reply.raw.on("close", onClose);
      try {
        if (request.body.stream !== true) {
          return await service.create(request.subjectUid, request.body, {
            clientGone: clientGone.signal,
          });
        }
        const writer = new StreamingResponseWriter(reply, request.id);
        try {
          writer.complete(
            await service.create(request.subjectUid, request.body, {
              sink: writer,
              clientGone: clientGone.signal,
            }),
          );
        } catch (error) {
          if (!writer.begun) throw error;
          request.log.warn({ err: error }, "streamed response failed");
          writer.fail(error);
        }
        return reply;
      } finally {
        reply.raw.off("close", onClose);
      }
    },
  );

  app.post<{ Params: z.infer<typeof responseIdParamsSchema> }>(
    "/v1/responses/:id/cancel",
    {
      schema: {
        summary:
          "Cancel a response: an in-progress one stops its upstream call and ends cancelled; a finished one comes back as it is",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        params: responseIdParamsSchema,
        response: { 200: responseObjectSchema, ...errors },
      },
    },
    async (request) => service.cancel(request.subjectUid, request.params.id),
  );

  // Reconciles abandoned responses at start, then renews and reconciles every third of a lease.
  app.addHook("onReady", async () => {
    await service.leases.start((error) =>
      app.log.warn(
        { err: error },
        "ending abandoned responses failed; retried every third of a lease",
      ),
    );
  });
  app.addHook("onClose", async () => {
    await service.leases.stop();
  });

  app.get<{
    Params: z.infer<typeof responseIdParamsSchema>;
    Querystring: z.infer<typeof retrieveResponseQuerySchema>;
  }>(
    "/v1/responses/:id",
    {
      schema: {
        summary: "Read a stored response (stream=true: replayed as server-sent events)",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        params: responseIdParamsSchema,
        querystring: retrieveResponseQuerySchema,
        response: { 200: responseObjectSchema, ...errors },
      },
    },
    async (request, reply) => {
      const response = await service.get(request.subjectUid, request.params.id);
      if (request.query.stream !== true) return response;
      return sendReplay(reply, request.id, response, request.query.starting_after, () =>
        service.get(request.subjectUid, request.params.id),
      );
    },
  );

  app.get<{
    Params: z.infer<typeof responseIdParamsSchema>;
    Querystring: z.infer<typeof inputItemsQuerySchema>;
  }>(
    "/v1/responses/:id/input_items",
    {
      schema: {
        summary: "The input items a stored response took",
        tags: ["responses"],
        security: [{ apiKey: [] }],
        params: responseIdParamsSchema,
        querystring: inputItemsQuerySchema,
        response: { 200: inputItemListSchema, ...errors },
      },
    },
    async (request) => {
      const { limit, order, after, before } = request.query;
      let items = await service.inputItems(request.subjectUid, request.params.id);
      if (order === "desc") items = [...items].reverse();
      if (after !== undefined) {
        const index = items.findIndex((item) => item.id === after);
        items = index < 0 ? [] : items.slice(index + 1);
      }
      if (before !== undefined) {
        const index = items.findIndex((item) => item.id === before);
        items = index < 0 ? [] : items.slice(0, index);
      }
      const data = items.slice(0, limit);
      return {
        object: "list" as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        has_more: items.length > limit,
      };
    },
  );
}
