import { VerbatimError } from "../core/errors.js";
import { AnthropicStreamParser, parseAnthropicResponse } from "./anthropic/parse.js";
import { GeminiStreamParser, parseGeminiResponse } from "./gemini/parse.js";
import { ChatStreamParser, parseChatResponse } from "./openai-chat/parse.js";
import { ResponsesStreamParser, parseResponsesResponse } from "./openai-responses/parse.js";
import type { ProviderId, RoundResult, StreamEvent } from "./types.js";
import type { SseEvent } from "./wire/sse.js";

export type { SseEvent } from "./wire/sse.js";

/** Turns a provider's SSE events into stream events, then into the round's result. */
export interface StreamParser {
  push(event: SseEvent): readonly StreamEvent[];
  /** The round's result once the stream ended (throws if it ended early). */
  finish(): RoundResult;
}

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
