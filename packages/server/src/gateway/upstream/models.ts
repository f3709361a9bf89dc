import { VerbatimError } from "verbatim-llm/core";
import { z } from "zod";
import { resolveUpstream, type UpstreamConfig } from "./config.js";

export const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal("model"),
    created: z.int().describe("Always 0: the server does not know when a model was made."),
    owned_by: z.string().describe("The upstream provider that serves it."),
  })
  .describe("A model the server routes, in the shape of OpenAI's models API.");
export type ModelObject = z.infer<typeof modelSchema>;

export const modelListSchema = z.object({
  object: z.literal("list"),
  data: z.array(modelSchema),
  verbatim_patterns: z
    .array(z.object({ pattern: z.string(), owned_by: z.string() }))
    .describe("verbatim: the routes that name models by a pattern (`claude*`): any match works."),
});
export type ModelList = z.infer<typeof modelListSchema>;

/**
 * The models the upstream configuration routes to a provider with a key
 * (VERBATIM_MODEL_PROVIDERS): exact names as models, patterns apart.
 */
export function routedModels(config: UpstreamConfig): ModelList {
  const configured = config.routes.filter(
    (route) => config.providers[route.provider] !== undefined,
  );
  return {
    object: "list",
    data: configured
      .filter((route) => !route.pattern.includes("*"))
      .map((route) => ({
        id: route.pattern,
        object: "model",
        created: 0,
        owned_by: route.provider,
      })),
    verbatim_patterns: configured
      .filter((route) => route.pattern.includes("*"))
      .map((route) => ({ pattern: route.pattern, owned_by: route.provider })),
  };
}

/** A model the configuration routes (any name a route matches), else not found. */
export function routedModel(config: UpstreamConfig, id: string): ModelObject {
  let provider: string;
  try {
    provider = resolveUpstream(config, id).provider;
  } catch {
    throw new VerbatimError("resource_not_found", `the server routes no model "${id}"`, {
      where: id,
      hint: "GET /v1/models lists the routed models; the operator maps more with VERBATIM_MODEL_PROVIDERS",
    });
  }
  return { id, object: "model", created: 0, owned_by: provider };
}
