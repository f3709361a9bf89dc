/**
 * A local Anthropic Messages API upstream (POST /v1/messages, server-sent events) whose every
 * answer a test writes itself, event by event, and that records each request: its body, when
 * it arrived and when its connection closed (to see that a request was aborted, and when).
 * The event names and fields follow streams captured from api.anthropic.com, as in
 * anthropic-upstream.ts.
 */
import { createServer, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface UpstreamRequest {
  readonly body: Record<string, unknown>;
  readonly arrivedAt: number;
  /** performance.now() when the request's response closed (finished or aborted). */
  closedAt: number | undefined;
  /** True when the connection closed before the answer was whole. */
  aborted: boolean;
}

/** Writes one answer. */
export class AnswerWriter {
  #index = 0;
  #textOpen = false;
  constructor(readonly response: ServerResponse) {}

  #event(name: string, data: unknown): void {
    if (!this.response.writableEnded)
      this.response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** message_start, with the model the upstream says it is. */
  start(model: string): void {
    this.response.writeHead(200, { "content-type": "text/event-stream" });
    this.#event("message_start", {
      type: "message_start",
      message: {
        id: "msg_01ControlledUpstream",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    });
  }

  text(text: string): void {
    if (!this.#textOpen) {
      this.#textOpen = true;
      this.#event("content_block_start", {
        type: "content_block_start",
        index: this.#index,
        content_block: { type: "text", text: "" },
      });
    }
    this.#event("content_block_delta", {
      type: "content_block_delta",
      index: this.#index,
      delta: { type: "text_delta", text },
    });
  }

  end(stopReason = "end_turn"): void {
    if (this.#textOpen)
      this.#event("content_block_stop", { type: "content_block_stop", index: this.#index });
    this.#event("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    });
    this.#event("message_stop", { type: "message_stop" });
    this.response.end();
  }

  /** An HTTP error with the provider's error body. */
  /** An `error` event inside the stream (after `start`), as Anthropic sends when overloaded. */
  streamError(message: string): void {
    this.#event("error", { type: "error", error: { type: "overloaded_error", message } });
    this.response.end();
  }

  error(status: number, message: string): void {
    this.response.writeHead(status, { "content-type": "application/json" });
    this.response.end(JSON.stringify({ type: "error", error: { type: "api_error", message } }));
  }
}

export interface ControlledUpstream {
  readonly url: string;
  readonly requests: UpstreamRequest[];
  /** Answers each request (default: "ok", whole). May leave the answer open. */
  answer: (writer: AnswerWriter, body: Record<string, unknown>) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startControlledUpstream(): Promise<ControlledUpstream> {
  const requests: UpstreamRequest[] = [];
  const sockets = new Set<Socket>();
  const state = {
    url: "",
    requests,
    answer: (writer: AnswerWriter, body: Record<string, unknown>) => {
      writer.start(String(body["model"]));
      writer.text("ok");
      writer.end();
    },
    close: () => Promise.resolve(),
  } as ControlledUpstream;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      const record: UpstreamRequest = {
        body,
        arrivedAt: performance.now(),
        closedAt: undefined,
        aborted: false,
      };
      requests.push(record);
      response.on("close", () => {
        record.closedAt = performance.now();
        record.aborted = !response.writableFinished;
      });
      void state.answer(new AnswerWriter(response), body);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
