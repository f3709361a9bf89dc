import type { FastifyInstance } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import { z } from "zod";
import { errorReplySchema } from "../errors.js";
import { resolveUpstream, type UpstreamConfig } from "../../gateway/upstream/config.js";

const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal("model"),
    created: z.int().describe("Always 0: the server does not know when a model was made."),
    owned_by: z.string().describe("The upstream provider that serves it."),
  })
  .describe("A model the server routes, in the shape of OpenAI's models API.");

const modelListSchema = z.object({
  object: z.literal("list"),
  data: z.array(modelSchema),
  verbatim_patterns: z
    .array(z.object({ pattern: z.string(), owned_by: z.string() }))
    .describe("verbatim: the routes that name models by a pattern (`claude*`): any match works."),
});

const errors = { 401: errorReplySchema, 404: errorReplySchema, 429: errorReplySchema };

/**
 * GET /v1/models and /v1/models/:model: the models the upstream configuration routes to a
 * provider with a key (VERBATIM_MODEL_PROVIDERS): exact names as models, patterns apart.
 */
export function registerModelRoutes(app: FastifyInstance, config: UpstreamConfig): void {
  const configured = config.routes.filter(
    (route) => config.providers[route.provider] !== undefined,
  );
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
    async () => ({
      object: "list" as const,
      data: configured
        .filter((route) => !route.pattern.includes("*"))
        .map((route) => ({
          id: route.pattern,
          object: "model" as const,
          created: 0,
          owned_by: route.provider,
        })),
      verbatim_patterns: configured
        .filter((route) => route.pattern.includes("*"))
        .map((route) => ({ pattern: route.pattern, owned_by: route.provider })),
    }),
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
    async (request) => {
      const { model: id } = request.params;
      let provider: string;
      try {
        provider = resolveUpstream(config, id).provider;
      } catch {
        throw new VerbatimError("resource_not_found", `the server routes no model "${id}"`, {
          where: id,
          hint: "GET /v1/models lists the routed models; the operator maps more with VERBATIM_MODEL_PROVIDERS",
        });
      }
      return { id, object: "model" as const, created: 0, owned_by: provider };
    },
  );
}
