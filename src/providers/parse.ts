import { VerbatimError } from "../core/errors.js";
import type { ProviderId, RoundResult, StreamEvent } from "./types.js";

/** One server-sent event: its `event:` name (if any) and its joined `data:` lines. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** Turns a provider's SSE events into stream events, then into the round's result. */
export interface StreamParser {
  push(event: SseEvent): readonly StreamEvent[];
  /** The round's result once the stream ended (throws if it ended early). */
  finish(): RoundResult;
}

/** Parses a provider's non-streamed JSON response body. */
export function parseResponse(
  provider: ProviderId,
  body: string,
  requestedModel: string,
): RoundResult {
  void body;
  void requestedModel;
  throw new VerbatimError("internal_error", `parsing for ${provider} is not ready yet`);
}

export function createStreamParser(provider: ProviderId, requestedModel: string): StreamParser {
  void requestedModel;
  throw new VerbatimError("internal_error", `stream parsing for ${provider} is not ready yet`);
}
