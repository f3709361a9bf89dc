import type { FastifyInstance } from "fastify";
import type { RecordedCalls } from "../../gateway/recorded-calls.js";
import type { UpstreamConfig } from "../upstream/config.js";
import { fastifyExchange, passThrough, type RawJsonBody } from "./pass-through.js";
import {
  COUNT_TOKENS_ROUTE,
  MESSAGES_ROUTE,
  passThroughCall,
  type PassThroughRoute,
} from "./pass-through-routes.js";

/**
 * POST /v1/messages and POST /v1/messages/count_tokens: Anthropic Messages passed through to
 * the anthropic upstream byte for byte (query such as `?beta=true` and `anthropic-beta`
 * included), authenticated with the subject's gateway key as `x-api-key` or a bearer token.
 * Model calls are recorded as chains (docs/server.md, "Recorded calls"); token counts are not.
 */
export function registerMessagesRoutes(
  app: FastifyInstance,
  config: UpstreamConfig,
  recorder: RecordedCalls,
): void {
  for (const route of [MESSAGES_ROUTE, COUNT_TOKENS_ROUTE]) {
    registerPassThroughRoute(app, route, config, recorder);
  }
}

/** One pass-through route on Fastify's router (and in the OpenAPI document). */
export function registerPassThroughRoute(
  app: FastifyInstance,
  route: PassThroughRoute,
  config: UpstreamConfig,
  recorder: RecordedCalls,
): void {
  app.post<{ Body: RawJsonBody }>(
    route.path,
    { schema: { summary: route.summary, tags: ["pass-through"], security: [{ apiKey: [] }] } },
    async (request, reply) => {
      const call = passThroughCall(route, config, request.url, request.body);
      await passThrough(fastifyExchange(request, reply), recorder, call);
      return reply;
    },
  );
}
