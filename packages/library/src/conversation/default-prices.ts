import { contextWindow, imagePrice, tokenPrice } from "../pricing/cost.js";
import type { PriceBook } from "./prices.js";

/** Providers whose turns are not billed per token (CLI agents on their own plans). */
const NOT_BILLED_PER_TOKEN = new Set(["claude-code", "codex"]);

/** The price book over the bundled tables of src/pricing (prices, context windows, images). */
export const defaultPriceBook: PriceBook = {
  contextWindow: (provider, model) => contextWindow(provider, model),
  billsPerToken: (provider) => !NOT_BILLED_PER_TOKEN.has(provider),
  requestCost: (provider, model, usage) =>
    tokenPrice(provider, model, {
      input: usage.input,
      output: usage.output,
      cacheRead: usage.cacheRead,
      cacheWrite: usage.cacheWrite,
      webSearchRequests: usage.webSearchRequests,
      ...(usage.cacheWrite1h === undefined ? {} : { cacheWrite1h: usage.cacheWrite1h }),
    }),
  imageCost: (image) => {
    const each = imagePrice(image.provider, image.model);
    return each === undefined ? undefined : each * (image.count ?? 1);
  },
};
