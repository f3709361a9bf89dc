import type { Usage } from "../format/conversation-schema.js";
import type { ItemOfType } from "../format/items.js";
import { totalInput } from "../pricing/cost.js";
import type { PriceBook } from "./prices.js";

/** The share of the context window at which the panel offers compaction (A18). */
export const CONTEXT_NOTICE_THRESHOLD = 0.8;

/**
 * Watches how full the context is (A18): after a request whose total input reaches 80% of the
 * current model's context window, the panel gains one notice offering compaction; it comes
 * again only after a request below the line (once per crossing).
 */
export class ContextMeter {
  private above = false;

  constructor(private readonly prices: PriceBook) {}

  /** Sets the starting side of the line from the saved last-round usage, without a notice. */
  restore(lastRoundUsage: Usage | undefined, provider: string, model: string): void {
    this.above = lastRoundUsage !== undefined && this.isAbove(lastRoundUsage, provider, model);
  }

  reset(): void {
    this.above = false;
  }

  afterRequest(
    usage: Usage,
    provider: string,
    model: string,
  ): Omit<ItemOfType<"notice">, "id"> | undefined {
    const wasAbove = this.above;
    this.above = this.isAbove(usage, provider, model);
    if (!this.above || wasAbove) return undefined;
    const window = this.prices.contextWindow(provider, model) ?? 0;
    const percent = Math.floor((totalInput(usage) / window) * 100);
    return {
      type: "notice",
      kind: "contextFull",
      text: `The last request used ${percent}% of the model's context window. Compact the conversation to continue with room to spare.`,
      action: "compact",
    };
  }

  private isAbove(usage: Usage, provider: string, model: string): boolean {
    const window = this.prices.contextWindow(provider, model);
    return (
      window !== undefined && window > 0 && totalInput(usage) >= CONTEXT_NOTICE_THRESHOLD * window
    );
  }
}
