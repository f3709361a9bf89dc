/**
 * Cost of requests and of a conversation (A8), priced with the maintained table of
 * `@pydantic/genai-prices`; generated images with the bundled per-image table.
 */
import { calcPrice } from "@pydantic/genai-prices";
import { contextWindowRows, imagePriceRows, matchRow } from "./tables.js";
import type { Cost, Usage } from "./types.js";

/** The price package's provider id of each verbatim provider. */
const PRICE_PROVIDER: Readonly<Record<string, string>> = {
  anthropic: "anthropic",
  "openai-chat": "openai",
  "openai-responses": "openai",
  gemini: "google",
  openrouter: "openrouter",
};

export interface RequestCostInput {
  /** A verbatim provider id (anthropic, openai-chat, openai-responses, gemini, openrouter). */
  readonly provider: string;
  readonly model: string;
  readonly usage: Usage;
  /** Images made by `generate_image` during the request, with the image model. */
  readonly generatedImages?: { readonly count: number; readonly model: string };
  /** When the request was made (prices change over time); default now. */
  readonly at?: Date;
}

/** The token price of a usage from the price table, in US dollars; undefined when unknown. */
export function tokenPrice(
  provider: string,
  model: string,
  usage: Usage,
  at?: Date,
): number | undefined {
  const providerId = PRICE_PROVIDER[provider] ?? provider;
  const priced = calcPrice(
    {
      input_tokens: usage.input + usage.cacheRead + usage.cacheWrite,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite,
      ...(usage.cacheWrite1h === undefined ? {} : { cache_write_1h_tokens: usage.cacheWrite1h }),
      output_tokens: usage.output,
      ...(usage.webSearchRequests > 0 ? { web_searches: usage.webSearchRequests } : {}),
    },
    model,
    at === undefined ? { providerId } : { providerId, timestamp: at },
  );
  return priced === null ? undefined : priced.total_price;
}

/** The price of one generated image from the bundled table; undefined when unknown. */
export function imagePrice(provider: string, model: string): number | undefined {
  return matchRow(imagePriceRows(), provider, model)?.dollarsPerImage;
}

/**
 * One request's cost: `reported` when the provider reported it (`usage.reportedCost`), else
 * `estimated` from the price table (generated images added when their price is known), else
 * `unknown`.
 */
export function requestCost(input: RequestCostInput): Cost {
  if (input.usage.reportedCost !== undefined)
    return { kind: "reported", dollars: input.usage.reportedCost };
  const tokens = tokenPrice(input.provider, input.model, input.usage, input.at);
  if (tokens === undefined) return { kind: "unknown" };
  let dollars = tokens;
  const images = input.generatedImages;
  if (images !== undefined && images.count > 0) {
    const each = imagePrice(input.provider, images.model);
    if (each !== undefined) dollars += each * images.count;
  }
  return { kind: "estimated", dollars };
}

/**
 * Adds one request's cost to a conversation's. Pass `undefined` as `total` before the first
 * request. Rules: `unknown` absorbs everything (a request that could not be priced makes the
 * total unknown); `notBilled` adds nothing; `reported` + `reported` stays `reported`; any mix
 * of `reported` and `estimated` is `estimated` with `partial: true`.
 */
export function accumulateCost(total: Cost | undefined, request: Cost): Cost {
  if (total === undefined) return request;
  if (total.kind === "unknown" || request.kind === "unknown") return { kind: "unknown" };
  if (request.kind === "notBilled") return total;
  if (total.kind === "notBilled") return request;
  const dollars = roundDollars(total.dollars + request.dollars);
  if (total.kind === "reported" && request.kind === "reported")
    return { kind: "reported", dollars };
  const partial =
    total.kind !== request.kind ||
    (total.kind === "estimated" && total.partial === true) ||
    (request.kind === "estimated" && request.partial === true);
  return partial ? { kind: "estimated", dollars, partial: true } : { kind: "estimated", dollars };
}

/** The cost of a list of requests (`unknown` for none). */
export function totalCost(requests: readonly Cost[]): Cost {
  let total: Cost | undefined;
  for (const request of requests) total = accumulateCost(total, request);
  return total ?? { kind: "unknown" };
}

/** Dollars rounded to 1e-10, so that sums of many requests carry no binary-fraction noise. */
export function roundDollars(dollars: number): number {
  return Math.round(dollars * 1e10) / 1e10;
}

/** Sums two usages (conversation totals). `cacheWrite1h` and `reportedCost` when either has them. */
export function addUsage(a: Usage, b: Usage): Usage {
  const oneHour =
    a.cacheWrite1h === undefined && b.cacheWrite1h === undefined
      ? undefined
      : (a.cacheWrite1h ?? 0) + (b.cacheWrite1h ?? 0);
  const reported =
    a.reportedCost === undefined && b.reportedCost === undefined
      ? undefined
      : roundDollars((a.reportedCost ?? 0) + (b.reportedCost ?? 0));
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    webSearchRequests: a.webSearchRequests + b.webSearchRequests,
    ...(oneHour === undefined ? {} : { cacheWrite1h: oneHour }),
    ...(reported === undefined ? {} : { reportedCost: reported }),
  };
}

/** The whole input of a request: `input + cacheRead + cacheWrite` (how full the context is). */
export function totalInput(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

/**
 * The context window of a model in tokens: the bundled table first, then the price package's
 * `context_window`; undefined when neither knows the model.
 */
export function contextWindow(provider: string, model: string): number | undefined {
  const row = matchRow(contextWindowRows(), provider, model);
  if (row !== undefined) return row.contextWindow;
  const providerId = PRICE_PROVIDER[provider] ?? provider;
  const priced = calcPrice({ input_tokens: 0 }, model, { providerId });
  return priced?.model.context_window;
}
