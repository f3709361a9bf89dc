import { streamRound, type RoundResult, type StreamEvent } from "verbatim-llm/providers";
import type { UpstreamConfig } from "../upstream/config.js";
import type { StopCause } from "./finish.js";
import type { ResponsePlan } from "./plan.js";

/**
 * A response's call to its model, streamed: started at once, stopped by a cancel, a lost lease,
 * a failed write or the client hanging up (whichever comes first names the stop).
 */
export class UpstreamCall {
  readonly events: AsyncGenerator<StreamEvent, RoundResult>;
  /** The first event (or the end): the model has answered. */
  readonly first: Promise<IteratorResult<StreamEvent, RoundResult>>;
  readonly #abort = new AbortController();
  #stopped: StopCause | undefined;
  readonly #clientGone: AbortSignal | undefined;
  readonly #onClientGone = () => this.stop("client_disconnected");

  constructor(
    config: UpstreamConfig,
    plan: ResponsePlan,
    model: string,
    /** Aborted when the client hangs up (undefined: the call runs on without its client). */
    clientGone: AbortSignal | undefined,
  ) {
    this.#clientGone = clientGone;
    if (clientGone?.aborted === true) this.#onClientGone();
    clientGone?.addEventListener("abort", this.#onClientGone, { once: true });
    this.events = streamRound(
      { provider: plan.provider, model, body: plan.body, stream: true },
      {
        apiKey: plan.upstream.apiKey,
        ...(plan.upstream.baseUrl === undefined ? {} : { baseUrl: plan.upstream.baseUrl }),
        env: {},
        timeoutMs: config.timeoutMs,
        maxRetries: config.maxRetries,
        signal: this.#abort.signal,
      },
    );
    this.first = this.events.next();
    this.first.catch(() => undefined);
  }

  /** Why the call was stopped, if it was. */
  get stopped(): StopCause | undefined {
    return this.#stopped;
  }

  stop(cause: StopCause): void {
    this.#stopped ??= cause;
    this.#abort.abort();
  }

  /** Aborts the call without naming a stop (a write failed before the answer began). */
  abort(): void {
    this.#abort.abort();
  }

  /** Stops listening for the client hanging up (the response is over or handed on). */
  detach(): void {
    this.#clientGone?.removeEventListener("abort", this.#onClientGone);
  }
}
