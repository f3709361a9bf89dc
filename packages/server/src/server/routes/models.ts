import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { errorReplySchema } from "../errors.js";
import type { UpstreamConfig } from "../../gateway/upstream/config.js";
import {
  modelListSchema,
  modelSchema,
  routedModel,
  routedModels,
} from "../../gateway/upstream/models.js";

const errors = { 401: errorReplySchema, 404: errorReplySchema, 429: errorReplySchema };

/**
 * GET /v1/models and /v1/models/:model: the models the upstream configuration routes
 * (gateway/upstream/models.ts).
 */
export function registerModelRoutes(app: FastifyInstance, config: UpstreamConfig): void {
  const models = routedModels(config);
  app.get(
    "/v1/models",
    {
      schema: {
        summary: "The models the server routes (exact names; patterns in verbatim_patterns)",
        tags: ["models"],
        security: [{ apiKey: [] }],
        response: { 200: modelListSchema, ...errors },
      },
    },
    async () => models,
  );
  app.get<{ Params: { model: string } }>(
    "/v1/models/:model",
    {
      schema: {
        summary: "A model the server routes (any name a route matches)",
        tags: ["models"],
        security: [{ apiKey: [] }],
        params: z.object({ model: z.string().min(1).max(200) }),
        response: { 200: modelSchema, ...errors },
      },
    },
    async (request) => routedModel(config, request.params.model),
  );
}
