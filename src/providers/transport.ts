import { VerbatimError } from "../core/errors.js";
import type { OutgoingRequest, StreamEvent, RoundResult, TransportOptions } from "./types.js";

/**
 * Sends the body's exact bytes and yields stream events, ending with `done` (whose result is
 * the parsed round). Retries 429, 5xx, timeouts and connection resets before the first byte
 * of the response body, with backoff honouring `retry-after`.
 */
export async function* streamRound(
  request: OutgoingRequest,
  options: TransportOptions = {},
): AsyncGenerator<StreamEvent, RoundResult> {
  void options;
  throw new VerbatimError("internal_error", `transport for ${request.provider} is not ready yet`);
}

/** Sends a request and returns its parsed round (streamed or not, as the body asks). */
export async function sendRound(
  request: OutgoingRequest,
  options: TransportOptions = {},
): Promise<RoundResult> {
  const stream = streamRound(request, options);
  for (;;) {
    const next = await stream.next();
    if (next.done === true) return next.value;
  }
}
