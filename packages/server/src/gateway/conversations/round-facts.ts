import type { RoundResult } from "verbatim-llm/providers";
import type { GatewayFacts } from "./message-types.js";

/**
 * The gateway facts of one parsed provider response: model, provider, the provider's response
 * id, usage and stop reason. Only these scalars: the response's message goes into `content`
 * and the raw body is never kept (B5).
 */
export function gatewayFactsFromRound(round: RoundResult): GatewayFacts {
  return {
    model: round.model,
    provider: round.provider,
    ...(round.responseId === undefined ? {} : { providerResponseId: round.responseId }),
    usage: round.usage,
    stopReason: round.stopReason,
  };
}
