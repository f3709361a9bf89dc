import { VerbatimError } from "../core/errors.js";
import { AnthropicStreamParser, parseAnthropicResponse } from "./anthropic/parse.js";
import { GeminiStreamParser, parseGeminiResponse } from "./gemini/parse.js";
import { ChatStreamParser, parseChatResponse } from "./openai-chat/parse.js";
import { ResponsesStreamParser, parseResponsesResponse } from "./openai-responses/parse.js";
import type { ProviderId, RoundResult, StreamParser } from "./types.js";

export type { SseEvent } from "./wire/sse.js";
export type { StreamParser } from "./types.js";

function unknownProvider(provider: never): never {
  throw new VerbatimError("provider_unknown", `unknown provider ${JSON.stringify(provider)}`);
}

/** Parses a provider's non-streamed JSON response body. */
export function parseResponse(
  provider: ProviderId,
  body: string,
  requestedModel: string,
): RoundResult {
  switch (provider) {
    case "anthropic":
      return parseAnthropicResponse(body, requestedModel);
    case "openai-chat":
    case "openrouter":
      return parseChatResponse(provider, body, requestedModel);
    case "openai-responses":
      return parseResponsesResponse(body, requestedModel);
    case "gemini":
      return parseGeminiResponse(body, requestedModel);
    default:
      return unknownProvider(provider);
  }
}

/** A parser for a provider's SSE stream. */
export function createStreamParser(provider: ProviderId, requestedModel: string): StreamParser {
  switch (provider) {
    case "anthropic":
      return new AnthropicStreamParser(requestedModel);
    case "openai-chat":
    case "openrouter":
      return new ChatStreamParser(provider, requestedModel);
    case "openai-responses":
      return new ResponsesStreamParser(requestedModel);
    case "gemini":
      return new GeminiStreamParser(requestedModel);
    default:
      return unknownProvider(provider);
  }
}
