import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { GatewayMessageStore } from "../../gateway/index.js";
import { errorReplySchema } from "../errors.js";
import {
  compressBodySchema,
  compressReplySchema,
  compressResponse,
  type CompressBody,
} from "../../gateway/responses/compress.js";
import { responseIdParamsSchema } from "../responses/route-schemas.js";
import type { UpstreamConfig } from "../../gateway/upstream/config.js";

/** POST /v1/responses/:id/compress (B6; gateway/responses/compress.ts). */
export function registerCompressRoute(
  app: FastifyInstance,
  store: GatewayMessageStore,
  upstream: UpstreamConfig | undefined,
): void {
  app.post<{ Params: z.infer<typeof responseIdParamsSchema>; Body: CompressBody }>(
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
    async (request) =>
      compressResponse(store, upstream, request.subjectUid, request.params.id, request.body),
  );
}
