import type { FastifyInstance } from "fastify";
import type { RecordedCalls } from "../../gateway/recorded-calls.js";
import type { UpstreamConfig } from "../upstream/config.js";
import { registerPassThroughRoute } from "./messages.js";
import { CHAT_COMPLETIONS_ROUTE } from "./pass-through-routes.js";

/**
 * POST /v1/chat/completions: OpenAI Chat Completions passed through to the upstream of that
 * format (openai-chat, openai-responses' key and base URL, or openrouter; the model route
 * decides when it names one of them) byte for byte, streamed or not, and recorded as a chain
 * (docs/server.md, "Recorded calls").
 */
export function registerChatCompletionsRoute(
  app: FastifyInstance,
  config: UpstreamConfig,
  recorder: RecordedCalls,
): void {
  registerPassThroughRoute(app, CHAT_COMPLETIONS_ROUTE, config, recorder);
}
