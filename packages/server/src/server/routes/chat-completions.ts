import type { FastifyInstance } from "fastify";
import type { RecordedCalls } from "../../gateway/recorded-calls.js";
import type { UpstreamConfig } from "../upstream/config.js";
import { modelOf, passThrough, targetFor, upstreamUrl, type RawJsonBody } from "./pass-through.js";

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
  app.post<{ Body: RawJsonBody }>(
    "/v1/chat/completions",
    {
      schema: {
        summary:
          "OpenAI Chat Completions, passed through byte for byte (stream: true for SSE) and recorded as a chain",
        tags: ["pass-through"],
        security: [{ apiKey: [] }],
      },
    },
    async (request, reply) => {
      const target = targetFor(config, modelOf(request.body), [
        "openai-chat",
        "openai-responses",
        "openrouter",
      ]);
      return passThrough(request, reply, recorder, {
        format: "openai-chat",
        target,
        url: upstreamUrl(target, request.url, "/v1"),
        body: request.body,
        timeoutMs: config.timeoutMs,
        record: true,
      });
    },
  );
}
