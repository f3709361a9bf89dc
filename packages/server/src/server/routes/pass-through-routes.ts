import type { FastifyInstance } from "fastify";
import type { ProviderId } from "verbatim-llm/providers";
import type { RecordedCalls } from "../../gateway/recording/calls.js";
import { checkStoredText } from "../../gateway/validation/checks.js";
import { errorSanitizerOf } from "./pass-through-errors.js";
import type { WireFormat } from "../../gateway/recording/usage.js";
import type { UpstreamConfig } from "../upstream/config.js";
import {
  fastifyExchange,
  modelOf,
  passThrough,
  targetFor,
  upstreamUrl,
  type PassThroughCall,
  type RawJsonBody,
} from "./pass-through.js";

/**
 * The pass-through routes (docs/server/recorded-calls.md, "Recorded calls"), registered on
 * Fastify's router (registerPassThroughRoute, which also carries the OpenAPI entries). Each
 * passes the client's bytes through to the upstream of its wire format and back, authenticated
 * with the subject's gateway key as a bearer token or (Anthropic clients) `x-api-key`.
 */
export interface PassThroughRoute {
  readonly path: string;
  readonly format: WireFormat;
  /** The upstreams that speak the route's wire format, in order of preference. */
  readonly accepted: readonly ProviderId[];
  /** The part of the request path the upstream's base URL replaces ("/v1" for OpenAI's). */
  readonly stripPrefix: string;
  /** Record the exchange as a chain (false for token counts). */
  readonly record: boolean;
  readonly summary: string;
}

/** A pass-through route with the upstreams and the recorder that serve it. */
export interface PassThroughRouteServing {
  readonly route: PassThroughRoute;
  readonly config: UpstreamConfig;
  readonly recorder: RecordedCalls;
}

/**
 * POST /v1/messages: Anthropic Messages to the anthropic upstream, query (`?beta=true`) and
 * `anthropic-beta` included, recorded as a chain.
 */
export const MESSAGES_ROUTE: PassThroughRoute = {
  path: "/v1/messages",
  format: "anthropic-messages",
  accepted: ["anthropic"],
  stripPrefix: "",
  record: true,
  summary:
    "Anthropic Messages, passed through byte for byte (stream: true for SSE) and recorded as a chain",
};

/** POST /v1/messages/count_tokens: passed through, not recorded. */
export const COUNT_TOKENS_ROUTE: PassThroughRoute = {
  path: "/v1/messages/count_tokens",
  format: "anthropic-messages",
  accepted: ["anthropic"],
  stripPrefix: "",
  record: false,
  summary: "Anthropic token count, passed through byte for byte (not recorded)",
};

/**
 * POST /v1/chat/completions: OpenAI Chat Completions to the upstream of that format
 * (openai-chat, openai-responses' key and base URL, or openrouter; the model route decides when
 * it names one of them), streamed or not, recorded as a chain.
 */
export const CHAT_COMPLETIONS_ROUTE: PassThroughRoute = {
  path: "/v1/chat/completions",
  format: "openai-chat",
  accepted: ["openai-chat", "openai-responses", "openrouter"],
  stripPrefix: "/v1",
  record: true,
  summary:
    "OpenAI Chat Completions, passed through byte for byte (stream: true for SSE) and recorded as a chain",
};

export const PASS_THROUGH_ROUTES: readonly PassThroughRoute[] = [
  MESSAGES_ROUTE,
  COUNT_TOKENS_ROUTE,
  CHAT_COMPLETIONS_ROUTE,
];

/**
 * The call a request of `route` makes: its upstream (by the body's model) and URL; or a 400
 * (no model, or a model a recorded call could not store).
 */
export function passThroughCall(
  route: PassThroughRoute,
  config: UpstreamConfig,
  requestUrl: string,
  body: RawJsonBody,
): PassThroughCall {
  const model = modelOf(body);
  // The model is a column of the call's row: one the store cannot hold would leave the call
  // served but unrecorded, so it is refused before it goes upstream. (Messages are kept byte for
  // byte in the row whatever they hold; only their gateway messages may be left out.)
  if (route.record) checkStoredText(model, "body.model", "invalid_request");
  const target = targetFor(config, model, route.accepted);
  return {
    format: route.format,
    target,
    url: upstreamUrl(target, requestUrl, route.stripPrefix),
    body,
    timeoutMs: config.timeoutMs,
    record: route.record,
    errorSanitizer: errorSanitizerOf(config),
    forwardOrganization: config.forwardOrganizationHeaders === true,
  };
}

/** A pass-through route on Fastify's router (and in the OpenAPI document). */
export function registerPassThroughRoute(
  app: FastifyInstance,
  serving: PassThroughRouteServing,
): void {
  const { route, config, recorder } = serving;
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
