/**
 * The HTTP transport: sends a rendered body's exact bytes (node:http/https, or a caller's fetch:
 * src/providers/http-client.ts), retries what is worth
 * retrying before any response byte was used, and parses the JSON or SSE response.
 */
import { VerbatimError, isVerbatimError } from "../core/errors.js";
import { utf8Encode } from "../core/bytes.js";
import { requestHeaders, requestUrl, resolveEndpoint } from "./endpoints.js";
import { createStreamParser, parseResponse } from "./parse.js";
import type { OutgoingRequest, RoundResult, StreamEvent, TransportOptions } from "./types.js";
import { fetchPost, nodeHttpPost, type HttpReply } from "./http-client.js";
import { SseDecoder } from "./wire/sse.js";

const DEFAULT_TIMEOUT_MS = 600_000;
const DEFAULT_RETRIES = 2;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 60_000;

/** Statuses worth another try: timeouts, conflicts, rate limits, server errors (529 overloaded). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The delay a `retry-after` (seconds or an HTTP date) or `retry-after-ms` header asks for. */
export function retryAfterMs(
  headers: { get(name: string): string | null },
  now = Date.now(),
): number | undefined {
  const milliseconds = headers.get("retry-after-ms");
  if (milliseconds !== null && /^\d+(\.\d+)?$/.test(milliseconds.trim()))
    return Number(milliseconds);
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function aborted(): VerbatimError {
  return new VerbatimError("provider_aborted", "the request was cancelled");
}

async function errorFromResponse(response: HttpReply, provider: string): Promise<VerbatimError> {
  let text = "";
  try {
    text = await response.text();
  } catch {
    text = "";
  }
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | unknown };
    const inner = (parsed.error as { message?: unknown } | undefined)?.message;
    if (typeof inner === "string") message = inner;
  } catch {
    // not JSON: keep the text
  }
  return new VerbatimError(
    "provider_http_error",
    `${provider} answered HTTP ${response.status}: ${message}`,
    {
      details: { status: response.status, body: text.slice(0, 2000) },
    },
  );
}

/** An attempt's AbortController tied to the caller's signal and a restartable timer. */
class AttemptControl {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => this.controller.abort();

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly timeoutMs: number,
  ) {
    signal?.addEventListener("abort", this.onAbort, { once: true });
    this.restart();
  }

  restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
  }

  failure(error: unknown, provider: string): VerbatimError {
    if (isVerbatimError(error)) return error;
    if (this.signal?.aborted === true) return aborted();
    if (this.timedOut) {
      return new VerbatimError(
        "provider_timeout",
        `${provider} sent nothing for ${this.timeoutMs} ms`,
      );
    }
    const cause = error instanceof Error ? error : new Error(String(error));
    return new VerbatimError(
      "provider_network_error",
      `${provider} could not be reached: ${cause.message}`,
      {
        cause,
      },
    );
  }
}

/**
 * Sends the body's exact bytes and yields stream events, ending with `done` (whose result is
 * also the generator's return value). Retries 429, 5xx, timeouts and connection failures that
 * happen before the response is used, with exponential backoff that honours `retry-after`.
 */
export async function* streamRound(
  request: OutgoingRequest,
  options: TransportOptions = {},
): AsyncGenerator<StreamEvent, RoundResult> {
  const { apiKey, baseUrl } = resolveEndpoint(request.provider, options);
  const url = requestUrl(request.provider, request.model, request.stream, baseUrl);
  const headers = requestHeaders(request.provider, apiKey, options.headers);
  if (request.stream) headers["accept"] = "text/event-stream";
  const bytes = utf8Encode(request.body) as Uint8Array<ArrayBuffer>;
  const post = options.fetch === undefined ? nodeHttpPost : fetchPost(options.fetch);
  const retries = options.maxRetries ?? DEFAULT_RETRIES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const baseDelay = options.retryBaseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_DELAY_MS;

  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted === true) throw aborted();
    const control = new AttemptControl(options.signal, timeoutMs);
    let response: HttpReply;
    try {
      response = await post(url, { headers, body: bytes, signal: control.controller.signal });
    } catch (error) {
      control.dispose();
      const failure = control.failure(error, request.provider);
      if (failure.code === "provider_aborted" || attempt >= retries) throw failure;
      const delay = baseDelay * 2 ** attempt;
      options.onRetry?.({ attempt: attempt + 1, delayMs: delay, reason: failure.message });
      await sleep(delay, options.signal);
      continue;
    }
    if (response.status < 200 || response.status > 299) {
      control.dispose();
      const failure = await errorFromResponse(response, request.provider);
      const asked = retryAfterMs({ get: (name) => response.header(name) });
      if (
        !isRetryableStatus(response.status) ||
        attempt >= retries ||
        (asked !== undefined && asked > maxDelay)
      ) {
        throw failure;
      }
      const delay = asked ?? baseDelay * 2 ** attempt;
      options.onRetry?.({ attempt: attempt + 1, delayMs: delay, reason: failure.message });
      await sleep(delay, options.signal);
      continue;
    }
    let finished = false;
    try {
      const type = response.header("content-type") ?? "";
      if (!request.stream || !type.includes("text/event-stream")) {
        control.restart();
        const text = await response.text();
        const result = parseResponse(request.provider, text, request.model);
        finished = true;
        yield { type: "done", result };
        return result;
      }
      const parser = createStreamParser(request.provider, request.model);
      const decoder = new SseDecoder();
      control.restart();
      for await (const chunk of response.chunks()) {
        for (const event of decoder.push(chunk)) {
          for (const streamEvent of parser.push(event)) yield streamEvent;
        }
        control.restart();
      }
      for (const event of decoder.end()) {
        for (const streamEvent of parser.push(event)) yield streamEvent;
      }
      const result = parser.finish();
      finished = true;
      yield { type: "done", result };
      return result;
    } catch (error) {
      throw control.failure(error, request.provider);
    } finally {
      // A consumer that stops reading early ends the request, so the connection is freed.
      if (!finished) control.controller.abort();
      control.dispose();
    }
  }
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
