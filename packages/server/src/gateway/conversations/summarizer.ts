import type { Message } from "verbatim-llm/history";
import type { Usage } from "verbatim-llm/pricing";

/** What a summarizer is asked: the model-visible context to replace, in order. */
export interface SummaryRequest {
  /**
   * The context of the anchor being compressed, oldest first. When the chain was compressed
   * before, the first message is that earlier summary (role user): summarise from it on.
   */
  readonly messages: readonly Message[];
  /** True when `messages[0]` is an earlier summary. */
  readonly startsWithSummary: boolean;
  readonly signal?: AbortSignal;
}

/** A summary and, when a model wrote it, the facts of that call (kept as gateway facts). */
export interface SummaryResult {
  readonly text: string;
  readonly model?: string;
  readonly provider?: string;
  readonly providerResponseId?: string;
  readonly usage?: Usage;
}

/**
 * Writes the summary that replaces a context (B6, B13). The gateway's compression calls it
 * when the caller did not pass a summary; a provider-backed implementation makes one model
 * call through src/providers.
 */
export interface Summarizer {
  summarize(request: SummaryRequest): Promise<SummaryResult>;
}
