import type { FastifyReply } from "fastify";
import type { StreamEvent } from "verbatim-llm/providers";
import { errorReply, toVerbatimError } from "../errors.js";
import { functionCallItemId } from "../../gateway/responses/convert.js";
import type { ResponseObject } from "../../gateway/responses/schemas.js";
import type { ResponseSink } from "../../gateway/responses/service.js";
import { ResponseEventStream } from "./sse.js";

interface OpenCall {
  readonly itemId: string;
  readonly callId: string;
  readonly name: string;
  readonly outputIndex: number;
  arguments: string;
}

/** The event that ends a stream, by the response's final status (cancelled as incomplete). */
const STATUS_EVENTS: Readonly<Record<ResponseObject["status"], string>> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  cancelled: "response.incomplete",
  failed: "response.failed",
  in_progress: "response.incomplete",
};

/**
 * Writes a streamed response as the Responses API's server-sent events: response.created and
 * response.in_progress, output items as they open, text and argument deltas, their done
 * events, then response.completed (or response.failed).
 */
export class StreamingResponseWriter implements ResponseSink {
  #stream: ResponseEventStream | undefined;
  #response: ResponseObject | undefined;
  #nextIndex = 0;
  #text: { outputIndex: number; text: string } | undefined;
  readonly #calls = new Map<string, OpenCall>();

  constructor(
    private readonly reply: FastifyReply,
    private readonly requestId: string,
  ) {}

  /** True once the event stream has begun (errors then travel as response.failed). */
  get begun(): boolean {
    return this.#stream !== undefined;
  }

  begin(response: ResponseObject): void {
    this.reply.hijack();
    this.#stream = new ResponseEventStream(this.reply.raw, { "x-request-id": this.requestId });
    this.#response = response;
    this.#stream.send("response.created", { response });
    this.#stream.send("response.in_progress", { response });
  }

  event(event: StreamEvent): void {
    const stream = this.#stream;
    const response = this.#response;
    if (stream === undefined || response === undefined) return;
    switch (event.type) {
      case "text": {
        if (this.#text === undefined) {
          this.#text = { outputIndex: this.#nextIndex++, text: "" };
          stream.send("response.output_item.added", {
            output_index: this.#text.outputIndex,
            item: {
              type: "message",
              id: response.id,
              status: "in_progress",
              role: "assistant",
              content: [],
            },
          });
          stream.send("response.content_part.added", {
            item_id: response.id,
            output_index: this.#text.outputIndex,
            content_index: 0,
            part: { type: "output_text", text: "", annotations: [] },
          });
        }
        this.#text.text += event.text;
        stream.send("response.output_text.delta", {
          item_id: response.id,
          output_index: this.#text.outputIndex,
          content_index: 0,
          delta: event.text,
          logprobs: [],
        });
        break;
      }
      case "toolCallStart": {
        const call: OpenCall = {
          itemId: functionCallItemId(response.id, this.#calls.size),
          callId: event.id,
          name: event.name,
          outputIndex: this.#nextIndex++,
          arguments: "",
        };
        this.#calls.set(event.id, call);
        stream.send("response.output_item.added", {
          output_index: call.outputIndex,
          item: {
            type: "function_call",
            id: call.itemId,
            call_id: call.callId,
            name: call.name,
            arguments: "",
            status: "in_progress",
          },
        });
        break;
      }
      case "toolCallDelta": {
        const call = this.#calls.get(event.id);
        if (call === undefined) return;
        call.arguments += event.argumentsDelta;
        stream.send("response.function_call_arguments.delta", {
          item_id: call.itemId,
          output_index: call.outputIndex,
          delta: event.argumentsDelta,
        });
        break;
      }
      default:
        break;
    }
  }

  /** Closes the open items with the final response's content, then response.completed. */
  complete(final: ResponseObject): void {
    const stream = this.#stream;
    if (stream === undefined) return;
    for (const item of final.output) {
      if (item.type === "message") {
        const text = item.content.map((part) => ("text" in part ? part.text : "")).join("");
        const outputIndex = this.#text?.outputIndex ?? this.#nextIndex++;
        const part = { type: "output_text", text, annotations: [] };
        stream.send("response.output_text.done", {
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          text,
          logprobs: [],
        });
        stream.send("response.content_part.done", {
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          part,
        });
        stream.send("response.output_item.done", { output_index: outputIndex, item });
      } else if (item.type === "reasoning") {
        // Reasoning items come whole from the upstream's answer (withReasoning, convert.ts).
        const outputIndex = this.#nextIndex++;
        stream.send("response.output_item.added", { output_index: outputIndex, item });
        stream.send("response.output_item.done", { output_index: outputIndex, item });
      } else if (item.type === "function_call") {
        const open = this.#calls.get(item.call_id);
        const outputIndex = open?.outputIndex ?? this.#nextIndex++;
        stream.send("response.function_call_arguments.done", {
          item_id: item.id,
          output_index: outputIndex,
          arguments: item.arguments,
        });
        stream.send("response.output_item.done", { output_index: outputIndex, item });
      }
    }
    stream.send(STATUS_EVENTS[final.status], { response: final });
    stream.end();
  }

  /** Ends the stream with response.failed carrying the error. */
  fail(error: unknown): void {
    const stream = this.#stream;
    const response = this.#response;
    if (stream === undefined || response === undefined) return;
    const failure = toVerbatimError(error);
    const body = errorReply(failure, this.requestId).error;
    stream.send("response.failed", {
      response: {
        ...response,
        status: "failed",
        error: { code: body.code, message: body.message },
      },
    });
    stream.end();
  }
}
