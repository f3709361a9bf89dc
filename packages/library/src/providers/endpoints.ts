/**
 * Where each provider is reached and how it is authenticated (docs/providers.md, "Transport").
 * Keys and base URLs come from the options, else from these environment variables.
 */
import { VerbatimError } from "../core/errors.js";
import type { ProviderId } from "./types.js";

/** Where a provider answers and which environment variables name its key. */
export interface ProviderEndpoint {
  readonly keyVariables: readonly string[];
  readonly baseUrlVariable: string;
  readonly defaultBaseUrl: string;
}

/** Each provider's default base URL, path and key variables. */
export const PROVIDER_ENDPOINTS: Readonly<Record<ProviderId, ProviderEndpoint>> = {
  anthropic: {
    keyVariables: ["ANTHROPIC_API_KEY"],
    baseUrlVariable: "ANTHROPIC_BASE_URL",
    defaultBaseUrl: "https://api.anthropic.com",
  },
  "openai-chat": {
    keyVariables: ["OPENAI_API_KEY"],
    baseUrlVariable: "OPENAI_BASE_URL",
    defaultBaseUrl: "https://api.openai.com/v1",
  },
  "openai-responses": {
    keyVariables: ["OPENAI_API_KEY"],
    baseUrlVariable: "OPENAI_BASE_URL",
    defaultBaseUrl: "https://api.openai.com/v1",
  },
  gemini: {
    keyVariables: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    baseUrlVariable: "GEMINI_BASE_URL",
    defaultBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
  },
  openrouter: {
    keyVariables: ["OPENROUTER_API_KEY"],
    baseUrlVariable: "OPENROUTER_BASE_URL",
    defaultBaseUrl: "https://openrouter.ai/api/v1",
  },
};

/** The URL a request goes to. Gemini names the model and the streaming method in the path. */
export function requestUrl(
  provider: ProviderId,
  model: string,
  stream: boolean,
  baseUrl: string,
): string {
  const base = baseUrl.replace(/\/+$/, "");
  switch (provider) {
    case "anthropic":
      return `${base}/v1/messages`;
    case "openai-chat":
    case "openrouter":
      return `${base}/chat/completions`;
    case "openai-responses":
      return `${base}/responses`;
    case "gemini":
      return stream
        ? `${base}/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`
        : `${base}/models/${encodeURIComponent(model)}:generateContent`;
    default: {
      const unknown: never = provider;
      throw new VerbatimError("provider_unknown", `unknown provider ${JSON.stringify(unknown)}`);
    }
  }
}

/** The HTTP headers of a request: JSON content, the key in the provider's header, extras. */
export function requestHeaders(
  provider: ProviderId,
  apiKey: string,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  switch (provider) {
    case "anthropic":
      headers["x-api-key"] = apiKey;
      headers["anthropic-version"] = "2023-06-01";
      break;
    case "gemini":
      headers["x-goog-api-key"] = apiKey;
      break;
    case "openai-chat":
    case "openai-responses":
    case "openrouter":
      headers["authorization"] = `Bearer ${apiKey}`;
      break;
    default: {
      const unknown: never = provider;
      throw new VerbatimError("provider_unknown", `unknown provider ${JSON.stringify(unknown)}`);
    }
  }
  for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
  return headers;
}

/** The URL, headers and key of a provider from options and the environment. */
export function resolveEndpoint(
  provider: ProviderId,
  options: {
    readonly apiKey?: string;
    readonly baseUrl?: string;
    readonly env?: Readonly<Record<string, string | undefined>>;
  },
): { apiKey: string; baseUrl: string } {
  const endpoint = PROVIDER_ENDPOINTS[provider];
  const env = options.env ?? process.env;
  let apiKey = options.apiKey;
  for (const name of endpoint.keyVariables) {
    if (apiKey !== undefined && apiKey !== "") break;
    apiKey = env[name];
  }
  if (apiKey === undefined || apiKey === "") {
    throw new VerbatimError("provider_api_key_missing", `no API key for ${provider}`, {
      hint: `Pass apiKey or set ${endpoint.keyVariables.join(" or ")}`,
    });
  }
  const fromEnv = env[endpoint.baseUrlVariable];
  const baseUrl =
    options.baseUrl ??
    (fromEnv !== undefined && fromEnv !== "" ? fromEnv : endpoint.defaultBaseUrl);
  return { apiKey, baseUrl };
}
