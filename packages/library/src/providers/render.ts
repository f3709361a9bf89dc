import { VerbatimError } from "../core/errors.js";
import { renderAnthropic } from "./anthropic/render.js";
import { renderGemini } from "./gemini/render.js";
import { renderChat } from "./openai-chat/render.js";
import { renderResponses } from "./openai-responses/render.js";
import type { ProviderId, RenderInput, RenderedRequest } from "./types.js";

/**
 * The exact request body of the next request (pure: the bytes are a function of `input`).
 * Throws a VerbatimError for impossible input (a missing image, a tool call in a user
 * message); lossy mappings come back as `warnings`.
 */
export function renderRequest(provider: ProviderId, input: RenderInput): RenderedRequest {
  const hosted = input.options.hostedTools ?? [];
  if (hosted.length > 0 && provider !== "openai-responses") {
    throw new VerbatimError(
      "provider_invalid_options",
      `${provider} does not run hosted tools (${hosted.map((tool) => String(tool["type"])).join(", ")})`,
      { where: "options.hostedTools", hint: "Send hosted tools only to OpenAI Responses" },
    );
  }
  switch (provider) {
    case "anthropic":
      return renderAnthropic(input);
    case "openai-chat":
    case "openrouter":
      return renderChat(provider, input);
    case "openai-responses":
      return renderResponses(input);
    case "gemini":
      return renderGemini(input);
    default: {
      const unknown: never = provider;
      throw new VerbatimError("provider_unknown", `unknown provider ${JSON.stringify(unknown)}`, {
        hint: "Use one of anthropic, openai-chat, openai-responses, gemini, openrouter",
      });
    }
  }
}
