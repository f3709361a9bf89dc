import type { Usage } from "../format/conversation-schema.js";
import type { GeneratedImage } from "./tools.js";

/**
 * What the conversation asks of the price and context-window tables. `defaultPriceBook` reads
 * the bundled tables of src/pricing; a host may pass its own (for a private model, say).
 */
export interface PriceBook {
  /** The model's context window in tokens; undefined when the table does not know it. */
  contextWindow(provider: string, model: string): number | undefined;
  /** Whether the provider bills per token at all (false for a CLI on a subscription). */
  billsPerToken(provider: string): boolean;
  /** The dollar cost of one request's usage; undefined when the price is unknown. */
  requestCost(provider: string, model: string, usage: Usage): number | undefined;
  /** The dollar cost of generated images; undefined when the price is unknown. */
  imageCost(image: GeneratedImage): number | undefined;
}

/** A price book that knows nothing: every cost is unknown, no context window. */
export const unknownPrices: PriceBook = {
  contextWindow: () => undefined,
  billsPerToken: () => true,
  requestCost: () => undefined,
  imageCost: () => undefined,
};
