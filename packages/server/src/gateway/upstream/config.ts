import type { ImageUrlPolicy } from "./image-url-policy.js";
import { VerbatimError } from "verbatim-llm/core";
import type { ProviderId } from "verbatim-llm/providers";

/**
 * Which upstream provider serves which model, and how to reach it. Keys and base URLs come from
 * the environment variables the official clients use; the model → provider map from
 * VERBATIM_MODEL_PROVIDERS (docs/server/README.md), else the defaults below.
 */
export interface UpstreamProvider {
  readonly apiKey: string;
  readonly baseUrl?: string;
}

export interface ModelRoute {
  /** A model name, or a prefix ending in `*`. */
  readonly pattern: string;
  readonly provider: ProviderId;
}

export interface UpstreamConfig {
  readonly providers: Partial<Record<ProviderId, UpstreamProvider>>;
  /** First match wins. */
  readonly routes: readonly ModelRoute[];
  /** Per upstream request: ms to the response headers and between stream chunks. */
  readonly timeoutMs: number;
  /** Retries of 429/5xx/timeouts by the transport. */
  readonly maxRetries: number;
  /** max_output_tokens when the caller gives none. */
  readonly defaultMaxOutputTokens: number;
  /**
   * How long an in_progress response's lease lasts unless renewed (default 30,000 ms;
   * docs/server/responses.md, "Response lifecycle"): a response of a server that died ends `incomplete`
   * at most this long after its last renewal.
   */
  readonly responseLeaseMs?: number;
  /**
   * Keep `store: false` responses for the operator (default true;
   * `VERBATIM_KEEP_UNSTORED_RESPONSES=off`): the caller can never read them back either way.
   */
  readonly keepUnstoredResponses?: boolean;
  /**
   * Which image URLs of an input the server fetches (default: public addresses only;
   * VERBATIM_IMAGE_URLS, VERBATIM_IMAGE_URL_HOSTS; docs/server/responses.md, "Images").
   */
  readonly imageUrls?: ImageUrlPolicy;
  /**
   * Pass a caller's OpenAI-Organization and OpenAI-Project headers upstream on the pass-through
   * routes (default false: a caller would pick what the operator's key bills;
   * VERBATIM_FORWARD_ORGANIZATION_HEADERS).
   */
  readonly forwardOrganizationHeaders?: boolean;
}

/** The environment variables that hold each provider's API key (the official clients' names). */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<ProviderId, readonly string[]>> = {
  anthropic: ["ANTHROPIC_API_KEY"],
  "openai-responses": ["OPENAI_API_KEY"],
  "openai-chat": ["OPENAI_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
};

/** The environment variable that moves each provider's endpoint. */
export const PROVIDER_URL_VARIABLES: Readonly<Record<ProviderId, string>> = {
  anthropic: "ANTHROPIC_BASE_URL",
  "openai-responses": "OPENAI_BASE_URL",
  "openai-chat": "OPENAI_BASE_URL",
  gemini: "GEMINI_BASE_URL",
  openrouter: "OPENROUTER_BASE_URL",
};

/** Model names → provider when VERBATIM_MODEL_PROVIDERS is not set. */
export const DEFAULT_MODEL_ROUTES: readonly ModelRoute[] = [
  { pattern: "claude*", provider: "anthropic" },
  { pattern: "gpt*", provider: "openai-responses" },
  { pattern: "o1*", provider: "openai-responses" },
  { pattern: "o3*", provider: "openai-responses" },
  { pattern: "o4*", provider: "openai-responses" },
  { pattern: "chatgpt*", provider: "openai-responses" },
  { pattern: "gemini*", provider: "gemini" },
  { pattern: "*/*", provider: "openrouter" },
];

export const NO_UPSTREAM: UpstreamConfig = {
  providers: {},
  routes: DEFAULT_MODEL_ROUTES,
  timeoutMs: 120_000,
  maxRetries: 2,
  defaultMaxOutputTokens: 4096,
};

function patternMatches(pattern: string, model: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*") && pattern.endsWith("*") && pattern.length > 1) {
    return model.includes(pattern.slice(1, -1));
  }
  if (pattern.endsWith("*")) return model.startsWith(pattern.slice(0, -1));
  if (pattern.startsWith("*")) return model.endsWith(pattern.slice(1));
  return model === pattern;
}

/**
 * The route of a model: the first whose pattern matches it (`*` alone, `prefix*`, `*suffix`,
 * `*part*` or the exact name); the Responses service and the pass-through routes both route so.
 */
export function modelRoute(config: UpstreamConfig, model: string): ModelRoute | undefined {
  return config.routes.find((candidate) => patternMatches(candidate.pattern, model));
}

/** The provider that serves `model`; `upstream_not_configured` with how to configure one. */
export function resolveUpstream(
  config: UpstreamConfig,
  model: string,
): { readonly provider: ProviderId; readonly upstream: UpstreamProvider } {
  const route = modelRoute(config, model);
  if (route === undefined) {
    throw new VerbatimError(
      "upstream_not_configured",
      `no provider is mapped to the model "${model}"`,
      {
        where: "body.model",
        hint: `Map it on the server with VERBATIM_MODEL_PROVIDERS="${model}=anthropic" (or openai-responses, openai-chat, gemini, openrouter) and set that provider's API key`,
      },
    );
  }
  const upstream = config.providers[route.provider];
  if (upstream === undefined) {
    const keys = PROVIDER_KEY_VARIABLES[route.provider].join(" or ");
    throw new VerbatimError(
      "upstream_not_configured",
      `the model "${model}" goes to ${route.provider}, which has no API key configured`,
      {
        where: "body.model",
        hint: `Start the server with ${keys} set (and ${PROVIDER_URL_VARIABLES[route.provider]} for another endpoint), or map the model to a configured provider with VERBATIM_MODEL_PROVIDERS`,
      },
    );
  }
  return { provider: route.provider, upstream };
}
