/**
 * The fault test's HTTP client: one logical request (an "operation") is sent to the servers in
 * turn until one answers it. An attempt whose connection died (the server was killed), whose
 * answer broke off, or that timed out is sent again to the next server; a 429 waits its
 * `Retry-After`. "Acknowledged" means a 2xx answer the client received whole. Every attempt
 * has an id of its own (sent as `x-request-id`, and by the callers in what they store), so the
 * checks can tell the acknowledged attempt from the others.
 */

export interface AttemptRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly method?: "GET" | "POST";
}

/** What one answer means: the operation's value, or send it again. */
export type AnswerReading<T> = { readonly value: T } | { readonly retry: string };

export interface OperationCounts {
  operations: number;
  acknowledged: number;
  attempts: number;
  /** Attempts no server took: the connection was refused (a server down, not yet restarted). */
  refused: number;
  /** Attempts whose connection died, whose answer broke off or that timed out. */
  connectionLost: number;
  rateLimited: number;
  /** Answers neither 2xx, 429 nor a lost connection (and 2xx answers that were not whole). */
  unexpected: number;
  /** Operations given up (the time ran out) without an acknowledgement. */
  givenUp: number;
}

export interface UnexpectedAnswer {
  readonly kind: string;
  readonly status: number;
  readonly text: string;
}

/** A moment of an attempt the kills can be aimed at. */
export interface AttemptEvent {
  readonly kind: string;
  /** The server's index in `urls`. */
  readonly server: number;
  /** `answering`: a 2xx answer's head arrived (a stream began); `acknowledged`: it is whole. */
  readonly phase: "answering" | "acknowledged";
  readonly streamed: boolean;
}

export interface ClientOptions {
  readonly urls: readonly string[];
  /** performance.now() after which no new attempt starts. */
  readonly hardDeadline: number;
  readonly attemptTimeoutMs: number;
}

export class FaultClient {
  readonly counts = new Map<string, OperationCounts>();
  readonly unexpected: UnexpectedAnswer[] = [];
  #next = 0;
  readonly #options: ClientOptions;
  #watch: ((event: AttemptEvent) => boolean) | undefined;

  /**
   * Runs `watch` on every attempt event (synchronously, as the event happens) until it returns
   * true; the promise resolves then, or after `timeoutMs` with false.
   */
  when(watch: (event: AttemptEvent) => boolean, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#watch = undefined;
        resolve(false);
      }, timeoutMs);
      this.#watch = (event) => {
        if (!watch(event)) return false;
        clearTimeout(timer);
        this.#watch = undefined;
        resolve(true);
        return true;
      };
    });
  }

  #tell(event: AttemptEvent): void {
    this.#watch?.(event);
  }

  constructor(options: ClientOptions) {
    this.#options = options;
  }

  countsOf(kind: string): OperationCounts {
    let counts = this.counts.get(kind);
    if (counts === undefined) {
      counts = {
        operations: 0,
        acknowledged: 0,
        attempts: 0,
        refused: 0,
        connectionLost: 0,
        rateLimited: 0,
        unexpected: 0,
        givenUp: 0,
      };
      this.counts.set(kind, counts);
    }
    return counts;
  }

  /**
   * Sends `operation` until a server acknowledges it. `build` makes attempt `attemptId`'s
   * request; `read` judges a 2xx answer; `recover` may turn a non-2xx answer to a repeated
   * attempt into a value (a state the lost attempt already reached). Undefined when given up.
   */
  async send<T>(
    kind: string,
    operation: string,
    build: (attemptId: string) => AttemptRequest,
    read: (response: Response) => Promise<AnswerReading<T>>,
    recover?: (status: number, text: string) => Promise<T | undefined>,
  ): Promise<{ readonly value: T; readonly attemptId: string } | undefined> {
    const counts = this.countsOf(kind);
    counts.operations++;
    let unexpectedHere = 0;
    for (let attempt = 1; performance.now() < this.#options.hardDeadline; attempt++) {
      const attemptId = `${operation}.a${attempt}`;
      const request = build(attemptId);
      const server = this.#next++ % this.#options.urls.length;
      const url = this.#options.urls[server];
      counts.attempts++;
      let response: Response;
      try {
        response = await fetch(`${url}${request.path}`, {
          method: request.method ?? "POST",
          headers: {
            ...(request.body === undefined ? {} : { "content-type": "application/json" }),
            "x-request-id": attemptId,
            ...request.headers,
          },
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
          signal: AbortSignal.timeout(this.#options.attemptTimeoutMs),
        });
      } catch (error) {
        if ((error as { cause?: { code?: unknown } }).cause?.code === "ECONNREFUSED") {
          counts.refused++;
        } else counts.connectionLost++;
        await pause(Math.min(50 * attempt, 500));
        continue;
      }
      if (response.status === 429) {
        counts.rateLimited++;
        await response.arrayBuffer().catch(() => undefined);
        const seconds = Number(response.headers.get("retry-after") ?? "1");
        await pause(Math.min(Math.max(seconds, 0.05) * 1000, 2000));
        continue;
      }
      if (response.status < 200 || response.status > 299) {
        let text: string;
        try {
          text = await response.text();
        } catch {
          counts.connectionLost++;
          continue;
        }
        const recovered = attempt > 1 ? await recover?.(response.status, text) : undefined;
        if (recovered !== undefined) {
          counts.acknowledged++;
          return { value: recovered, attemptId };
        }
        counts.unexpected++;
        this.unexpected.push({ kind, status: response.status, text: text.slice(0, 300) });
        // Three refusals of one operation: it will not be acknowledged.
        if (++unexpectedHere === 3) break;
        await pause(200);
        continue;
      }
      const streamed = (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
      this.#tell({ kind, server, phase: "answering", streamed });
      let reading: AnswerReading<T>;
      try {
        reading = await read(response);
      } catch {
        counts.connectionLost++;
        continue;
      }
      if ("value" in reading) {
        this.#tell({ kind, server, phase: "acknowledged", streamed });
        counts.acknowledged++;
        return { value: reading.value, attemptId };
      }
      // A 2xx answer that was not whole: a stream cut before its last event.
      counts.connectionLost++;
    }
    counts.givenUp++;
    return undefined;
  }
}

export function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));
}

/** The events of a server-sent-events body: `[event name, parsed data]`. */
export function serverSentEvents(text: string): [string, unknown][] {
  const events: [string, unknown][] = [];
  for (const block of text.split("\n\n")) {
    let name = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    if (data === "") continue;
    try {
      events.push([name, JSON.parse(data) as unknown]);
    } catch {
      events.push([name, undefined]);
    }
  }
  return events;
}
