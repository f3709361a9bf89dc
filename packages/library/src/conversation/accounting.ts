import type { Cost, Usage } from "../format/conversation-schema.js";
import type { CliCost } from "./backend.js";
import { addUsage } from "../pricing/index.js";
import { addCost, addEstimatedDollars } from "./cost.js";
import type { PriceBook } from "./prices.js";
import { neverCharged, type ConversationState } from "./state.js";
import type { GeneratedImage } from "./tools.js";

/**
 * Adds one model request to the conversation's usage and cost (A7, A8): the provider's own
 * reported cost when it gave one, else the price table's estimate, `notBilled` for providers
 * that do not bill per token, `unknown` when the table has no price.
 */
export function chargeRequest(
  state: ConversationState,
  prices: PriceBook,
  provider: string,
  model: string,
  usage: Usage,
): void {
  const first = neverCharged(state);
  let cost: Cost;
  if (usage.reportedCost !== undefined) cost = { kind: "reported", dollars: usage.reportedCost };
  else if (!prices.billsPerToken(provider)) cost = { kind: "notBilled" };
  else {
    const dollars = prices.requestCost(provider, model, usage);
    cost = dollars === undefined ? { kind: "unknown" } : { kind: "estimated", dollars };
  }
  state.usage = addUsage(state.usage, usage);
  state.estimatedCost = addCost(state.estimatedCost, cost, first);
}

/** Adds a CLI turn's reported usage and cost (`reported`, `notBilled` or `unknown`). */
export function chargeCliTurn(state: ConversationState, usage: Usage, cost: CliCost): void {
  const first = neverCharged(state);
  state.usage = addUsage(state.usage, usage);
  state.lastRoundUsage = usage;
  state.estimatedCost = addCost(state.estimatedCost, cost, first);
}

/** Adds the price of generated images (A8); images without a known price add nothing. */
export function chargeGeneratedImages(
  state: ConversationState,
  prices: PriceBook,
  images: readonly GeneratedImage[],
): void {
  for (const image of images) {
    const dollars = prices.imageCost(image);
    if (dollars === undefined) continue;
    state.estimatedCost = addEstimatedDollars(state.estimatedCost, dollars, neverCharged(state));
  }
}
