import { VerbatimError } from "verbatim-llm/core";
import { PROVIDER_IDS, isProviderId, type ProviderId } from "verbatim-llm/providers";
import {
  DEFAULT_MODEL_ROUTES,
  PROVIDER_KEY_VARIABLES,
  PROVIDER_URL_VARIABLES,
  type ModelRoute,
  type UpstreamConfig,
  type UpstreamProvider,
} from "../../gateway/upstream/config.js";
import {
  IMAGE_URL_MODES,
  type AllowedHost,
  type ImageUrlPolicy,
} from "../../gateway/upstream/image-url-policy.js";
import { choiceFromEnv, switchFromEnv, wholeNumberFromEnv } from "../env.js";

/**
 * The upstream configuration (gateway/upstream/config.ts) read from the environment when `serve`
 * starts: keys and base URLs from the variables the official clients use, the model → provider
 * map from VERBATIM_MODEL_PROVIDERS, the limits, and the image URL policy (docs/server/README.md). A typo
 * stops the server with an error naming the variable.
 */

/** What it reads into: the gateway's types, named here for the server's routes. */
export type { ModelRoute, UpstreamConfig, UpstreamProvider };

/** Reads `pattern=provider,pattern=provider` (VERBATIM_MODEL_PROVIDERS). */
export function parseModelRoutes(text: string): ModelRoute[] {
  const routes: ModelRoute[] = [];
  for (const part of text.split(",")) {
    const entry = part.trim();
    if (entry === "") continue;
    const equals = entry.lastIndexOf("=");
    const pattern = entry.slice(0, equals).trim();
    const provider = entry.slice(equals + 1).trim();
    if (equals <= 0 || pattern === "" || !isProviderId(provider)) {
      throw new VerbatimError("invalid_argument", `cannot read the model route "${entry}"`, {
        where: "VERBATIM_MODEL_PROVIDERS",
        hint: `Write model=provider pairs separated by commas (a model may end in *); providers: ${PROVIDER_IDS.join(", ")}`,
      });
    }
    routes.push({ pattern, provider });
  }
  return routes;
}

function positiveInteger(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
): number {
  return wholeNumberFromEnv(env, name) ?? fallback;
}

/** The upstream configuration an environment describes. */
export function upstreamConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): UpstreamConfig {
  const providers: Partial<Record<ProviderId, UpstreamProvider>> = {};
  for (const provider of PROVIDER_IDS) {
    const apiKey = PROVIDER_KEY_VARIABLES[provider]
      .map((name) => env[name])
      .find((value) => value !== undefined && value !== "");
    if (apiKey === undefined) continue;
    const baseUrl = env[PROVIDER_URL_VARIABLES[provider]];
    providers[provider] =
      baseUrl === undefined || baseUrl === "" ? { apiKey } : { apiKey, baseUrl };
  }
  const routesText = env["VERBATIM_MODEL_PROVIDERS"];
  const routes =
    routesText === undefined || routesText.trim() === ""
      ? DEFAULT_MODEL_ROUTES
      : parseModelRoutes(routesText);
  return {
    providers,
    routes,
    timeoutMs: positiveInteger(env, "VERBATIM_UPSTREAM_TIMEOUT_MS", 120_000),
    maxRetries: positiveInteger(env, "VERBATIM_UPSTREAM_MAX_RETRIES", 2),
    defaultMaxOutputTokens: positiveInteger(env, "VERBATIM_DEFAULT_MAX_OUTPUT_TOKENS", 4096),
    responseLeaseMs: leaseMilliseconds(env),
    keepUnstoredResponses: switchFromEnv(env, "VERBATIM_KEEP_UNSTORED_RESPONSES") ?? true,
    imageUrls: imageUrlPolicyFromEnv(env),
    forwardOrganizationHeaders:
      switchFromEnv(env, "VERBATIM_FORWARD_ORGANIZATION_HEADERS") ?? false,
  };
}

/** The shortest response lease: renewals every third of it must fit between two rounds. */
const MIN_RESPONSE_LEASE_MS = 100;

function leaseMilliseconds(env: Readonly<Record<string, string | undefined>>): number {
  const value = positiveInteger(env, "VERBATIM_RESPONSE_LEASE_MS", 30_000);
  if (value < MIN_RESPONSE_LEASE_MS) {
    throw new VerbatimError(
      "invalid_argument",
      `VERBATIM_RESPONSE_LEASE_MS must be at least ${MIN_RESPONSE_LEASE_MS}, not ${value}`,
      {
        where: "VERBATIM_RESPONSE_LEASE_MS",
        hint: 'Leave it unset for 30000 ms (docs/server/responses.md, "Response lifecycle")',
      },
    );
  }
  return value;
}

const MODES_VARIABLE = "VERBATIM_IMAGE_URLS";
const HOSTS_VARIABLE = "VERBATIM_IMAGE_URL_HOSTS";

function allowedHost(entry: string): AllowedHost {
  let url: URL | undefined;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    url = undefined;
  }
  const explicitPort = /:(\d+)$/.exec(entry)?.[1];
  const plain =
    url !== undefined &&
    url.pathname === "/" &&
    !/[/?#@]/.test(entry) &&
    url.hostname !== "" &&
    (explicitPort === undefined || Number(explicitPort) <= 65535);
  if (url === undefined || !plain) {
    throw new VerbatimError("invalid_argument", `cannot read the host "${entry}"`, {
      where: HOSTS_VARIABLE,
      hint: `List host names or IP addresses, each with an optional :port, separated by commas (images.internal, 10.0.0.7:8080, [fd00::7]:443); brackets around an IPv6 address`,
    });
  }
  return explicitPort === undefined
    ? { hostname: url.hostname }
    : { hostname: url.hostname, port: Number(explicitPort) };
}

/** The image URL policy an environment describes. */
export function imageUrlPolicyFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): ImageUrlPolicy {
  const mode = choiceFromEnv(env, MODES_VARIABLE, IMAGE_URL_MODES) ?? "public";
  const allowedHosts = (env[HOSTS_VARIABLE] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map(allowedHost);
  return { mode, allowedHosts };
}
