import type { FastifyInstance } from "fastify";
import type { RecordedCalls } from "../../gateway/recorded-calls.js";
import type { UpstreamConfig } from "../upstream/config.js";
import { modelOf, passThrough, targetFor, upstreamUrl, type RawJsonBody } from "./pass-through.js";

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
  const route = (path: string, record: boolean, summary: string) =>
    app.post<{ Body: RawJsonBody }>(
      path,
      { schema: { summary, tags: ["pass-through"], security: [{ apiKey: [] }] } },
      async (request, reply) => {
        const target = targetFor(config, modelOf(request.body), ["anthropic"]);
        return passThrough(request, reply, recorder, {
          format: "anthropic-messages",
          target,
          url: upstreamUrl(target, request.url, ""),
          body: request.body,
          timeoutMs: config.timeoutMs,
          record,
        });
      },
    );
  route(
    "/v1/messages",
    true,
    "Anthropic Messages, passed through byte for byte (stream: true for SSE) and recorded as a chain",
  );
  route(
    "/v1/messages/count_tokens",
    false,
    "Anthropic token count, passed through byte for byte (not recorded)",
  );
}
