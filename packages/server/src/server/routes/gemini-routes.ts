import type { FastifyInstance } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import type { RecordedCalls } from "../../gateway/recording/calls.js";
import { checkStoredText } from "../../gateway/validation/checks.js";
import type { UpstreamConfig } from "../upstream/config.js";
import { swaggerTransform } from "../zod-schemas.js";
import { errorSanitizerOf } from "./pass-through-errors.js";
import {
  fastifyExchange,
  passThrough,
  targetFor,
  upstreamUrl,
  type PassThroughCall,
  type RawJsonBody,
} from "./pass-through.js";

/**
 * Google's Gemini API passed through (docs/server/recorded-calls.md, "Gemini"):
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (`?alt=sse` for
 * server-sent events; without it the API streams one JSON array) recorded as chains, and
 * `:countTokens` passed through unrecorded, to the `gemini` upstream (GEMINI_API_KEY,
 * GEMINI_BASE_URL) with the same path past `/v1beta` and query. The model and the method are
 * one path segment (`gemini-2.5-flash:generateContent`), so the route takes the rest of the path
 * and reads them by hand. The caller's key comes as a bearer token, `x-goog-api-key` or `?key=`
 * (auth.ts, query-key.ts: the query's key is gone from the URL before any route sees it).
 */

export const GEMINI_METHODS = ["generateContent", "streamGenerateContent", "countTokens"] as const;
export type GeminiMethod = (typeof GEMINI_METHODS)[number];

const PREFIX = "/v1beta/models/";

/** The model and method a request path names; a clear 404 for any other path under the prefix. */
export function geminiTarget(url: string): {
  readonly model: string;
  readonly method: GeminiMethod;
} {
  const path = url.split("?", 1)[0] ?? "";
  const rest = path.slice(PREFIX.length);
  const colon = rest.lastIndexOf(":");
  const method = rest.slice(colon + 1);
  let model = "";
  try {
    model = decodeURIComponent(rest.slice(0, colon));
  } catch {
    model = "";
  }
  if (
    !path.startsWith(PREFIX) ||
    colon <= 0 ||
    model === "" ||
    model.includes("/") ||
    !(GEMINI_METHODS as readonly string[]).includes(method)
  ) {
    const shown = rest.length > 80 ? `${rest.slice(0, 80)}…` : rest;
    throw new VerbatimError(
      "route_not_found",
      `"${shown}" is not a model and a method of the Gemini API this server passes through`,
      {
        where: "path",
        hint: `Send POST ${PREFIX}{model}:${GEMINI_METHODS.join("|")} (e.g. ${PREFIX}gemini-2.5-flash:generateContent)`,
      },
    );
  }
  return { model, method: method as GeminiMethod };
}

/** The call a Gemini request makes; a clear 400 for a body that is not a JSON object. */
export function geminiCall(
  config: UpstreamConfig,
  requestUrl: string,
  body: RawJsonBody | undefined,
): PassThroughCall {
  const { model, method } = geminiTarget(requestUrl);
  const value = body?.value;
  if (body === undefined || value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new VerbatimError("invalid_request", "the body is not a JSON object", {
      where: "body",
      hint: 'Send a GenerateContentRequest as JSON ({"contents": [...]}) with Content-Type: application/json; nothing was sent upstream',
    });
  }
  const record = method !== "countTokens";
  // The model is a column of the call's row (see passThroughCall).
  if (record) checkStoredText(model, "path (model)", "invalid_request");
  const target = targetFor(config, model, ["gemini"], "path (model)");
  return {
    format: "gemini-generate-content",
    target,
    url: upstreamUrl(target, requestUrl, "/v1beta"),
    body,
    model,
    timeoutMs: config.timeoutMs,
    record,
    errorSanitizer: errorSanitizerOf(config),
    forwardOrganization: false,
  };
}

/** The Gemini routes on Fastify's router (and in the OpenAPI document). */
export function registerGeminiRoutes(
  app: FastifyInstance,
  serving: { readonly config: UpstreamConfig; readonly recorder: RecordedCalls },
): void {
  app.post<{ Body: RawJsonBody | undefined }>(
    `${PREFIX}*`,
    {
      // Documented as the one path segment it takes, model and method (`{target}`).
      config: {
        swaggerTransform: ({
          schema,
          url,
        }: {
          readonly schema: unknown;
          readonly url: string;
        }) => ({
          ...swaggerTransform({ schema: schema as Record<string, unknown> | undefined, url }),
          url: `${PREFIX}{target}`,
        }),
      },
      schema: {
        summary:
          "Gemini API: {model}:generateContent and {model}:streamGenerateContent (?alt=sse, or a JSON array) passed through byte for byte and recorded as a chain; {model}:countTokens passed through, not recorded",
        tags: ["pass-through"],
        security: [{ apiKey: [] }],
      },
    },
    async (request, reply) => {
      const call = geminiCall(serving.config, request.url, request.body);
      await passThrough(fastifyExchange(request, reply), serving.recorder, call);
      return reply;
    },
  );
}
