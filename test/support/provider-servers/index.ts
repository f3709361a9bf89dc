/** Local servers speaking each provider's wire format, for tests (see harness.ts). */
import type { ProviderId } from "../../../packages/library/src/providers/index.js";
import { startAnthropicServer } from "./anthropic.js";
import { startGeminiServer } from "./gemini.js";
import { startOpenAIChatServer, startOpenRouterServer } from "./openai-chat.js";
import { startOpenAIResponsesServer } from "./openai-responses.js";
import type { ProviderServer } from "./harness.js";

export type {
  ProviderServer,
  ReceivedRequest,
  ScriptedRound,
  ScriptedToolCall,
} from "./harness.js";

export function startLocalProvider(provider: ProviderId): Promise<ProviderServer> {
  switch (provider) {
    case "anthropic":
      return startAnthropicServer();
    case "openai-chat":
      return startOpenAIChatServer();
    case "openai-responses":
      return startOpenAIResponsesServer();
    case "gemini":
      return startGeminiServer();
    case "openrouter":
      return startOpenRouterServer();
  }
}
