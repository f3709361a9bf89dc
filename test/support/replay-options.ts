/**
 * The render options of the byte-exact replay tests (A26), shared by the test and the child
 * process that reopens the saved conversation, so both render with the same options.
 */
import type { ProviderId, RenderOptions } from "../../packages/library/src/providers/index.js";

export const REPLAY_MODELS: Readonly<Record<ProviderId, string>> = {
  anthropic: "claude-sonnet-4-5",
  "openai-chat": "gpt-4.1",
  "openai-responses": "gpt-5",
  gemini: "gemini-2.5-flash",
  openrouter: "anthropic/claude-sonnet-4.5",
};

export const REPLAY_SYSTEM = "You are a careful design assistant. 日本語で答えてもよい。";

export const NEXT_USER_TEXT = "次のターン: continue ✨ with the card";

export function replayOptions(provider: ProviderId, previousMessageCount: number): RenderOptions {
  return {
    model: REPLAY_MODELS[provider],
    system: REPLAY_SYSTEM,
    maxTokens: 4096,
    tools: [
      {
        name: "read_file",
        description: "Read a file of the package",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" } },
          required: ["path"],
        },
      },
      {
        name: "screenshot",
        description: "Capture the canvas",
        inputSchema: { type: "object", properties: {} },
      },
    ],
    cache: { ttl: "5m", previousMessageCount, promptCacheKey: "conversation-7f3a" },
  };
}
