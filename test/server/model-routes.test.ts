import { expect, it } from "vitest";
import {
  modelRoute,
  resolveUpstream,
  type UpstreamConfig,
} from "../../packages/server/src/gateway/upstream/config.js";
import { targetFor } from "../../packages/server/src/server/routes/pass-through.js";

/**
 * Issue 17: one function names a model's route. POST /v1/responses (resolveUpstream) and the
 * pass-through routes (/v1/messages, /v1/chat/completions: targetFor) route every pattern shape
 * (exact name, `prefix*`, `*suffix`, `*part*`, `*`) the same way, first match first.
 */
const config: UpstreamConfig = {
  providers: {
    anthropic: { apiKey: "a" },
    "openai-chat": { apiKey: "c" },
    "openai-responses": { apiKey: "r" },
    openrouter: { apiKey: "o" },
  },
  routes: [
    { pattern: "house-model", provider: "openai-chat" },
    { pattern: "claude*", provider: "anthropic" },
    { pattern: "*-mini", provider: "openai-chat" },
    { pattern: "*turbo*", provider: "openai-responses" },
    { pattern: "*", provider: "openrouter" },
  ],
  timeoutMs: 1000,
  maxRetries: 0,
  defaultMaxOutputTokens: 16,
};

const cases = [
  ["house-model", "openai-chat"],
  ["house-model-2", "openrouter"],
  ["claude-sonnet-4", "anthropic"],
  ["my-claude", "openrouter"],
  ["gpt-5-mini", "openai-chat"],
  ["gpt-5-mini-x", "openrouter"],
  ["gpt-turbo-x", "openai-responses"],
  ["claude-turbo-mini", "anthropic"],
  ["anything", "openrouter"],
] as const;

it("the Responses service and the pass-through routes route a model by the same first-matching pattern (issue 17)", () => {
  for (const [model, provider] of cases) {
    expect(modelRoute(config, model)?.provider, model).toBe(provider);
    expect(resolveUpstream(config, model).provider, model).toBe(provider);
    expect(
      targetFor(config, model, ["openai-chat", "openai-responses", "anthropic", "openrouter"])
        .provider,
      model,
    ).toBe(provider);
  }
  const noCatchAll = { ...config, routes: config.routes.slice(0, -1) };
  expect(modelRoute(noCatchAll, "anything")).toBeUndefined();
  expect(() => resolveUpstream(noCatchAll, "anything")).toThrow(/no provider is mapped/);
});
