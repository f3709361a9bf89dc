import type { ServerResponse } from "node:http";

/** Server-sent events in the Responses API's stream format: `event: <type>` and its JSON. */
export class ResponseEventStream {
  #sequence = 0;
  #open = true;
  readonly #raw: ServerResponse;

  constructor(raw: ServerResponse, headers: Readonly<Record<string, string>>) {
    this.#raw = raw;
    raw.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    raw.on("close", () => {
      this.#open = false;
    });
  }

  get open(): boolean {
    return this.#open;
  }

  send(type: string, payload: Record<string, unknown>): void {
    if (!this.#open) return;
    const data = JSON.stringify({ type, sequence_number: this.#sequence++, ...payload });
    this.#raw.write(`event: ${type}\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.#open) this.#raw.end();
    this.#open = false;
  }
}
