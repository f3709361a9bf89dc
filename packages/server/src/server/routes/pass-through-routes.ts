import type { ProviderId } from "verbatim-llm/providers";
import type { RecordedCalls } from "../../gateway/recorded-calls.js";
import type { WireFormat } from "../../gateway/recorded-usage.js";
import type { UpstreamConfig } from "../upstream/config.js";
import {
  modelOf,
  targetFor,
  upstreamUrl,
  type PassThroughCall,
  type RawJsonBody,
} from "./pass-through.js";

/**
 * The pass-through routes (docs/server.md, "Recorded calls"), one table for both ways a request
 * reaches them: Fastify's router (registered by messages.ts and chat-completions.ts, which also
 * serve injected requests and carry the OpenAPI entries) and the server's front path for
 * requests over HTTP (../pass-through-front.ts).
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

export const MESSAGES_ROUTE: PassThroughRoute = {
  path: "/v1/messages",
  format: "anthropic-messages",
  accepted: ["anthropic"],
  stripPrefix: "",
  record: true,
  summary:
    "Anthropic Messages, passed through byte for byte (stream: true for SSE) and recorded as a chain",
};

export const COUNT_TOKENS_ROUTE: PassThroughRoute = {
  path: "/v1/messages/count_tokens",
  format: "anthropic-messages",
  accepted: ["anthropic"],
  stripPrefix: "",
  record: false,
  summary: "Anthropic token count, passed through byte for byte (not recorded)",
};

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

/** The call a request of `route` makes: its upstream (by the body's model) and URL; or a 400. */
export function passThroughCall(
  route: PassThroughRoute,
  config: UpstreamConfig,
  requestUrl: string,
  body: RawJsonBody,
): PassThroughCall {
  const target = targetFor(config, modelOf(body), route.accepted);
  return {
    format: route.format,
    target,
    url: upstreamUrl(target, requestUrl, route.stripPrefix),
    body,
    timeoutMs: config.timeoutMs,
    record: route.record,
  };
}
