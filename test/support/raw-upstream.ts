/**
 * A local upstream that keeps every request's exact bytes and headers and answers in the
 * Anthropic Messages or OpenAI Chat wire format (JSON, or server-sent events when the body asks
 * for `stream: true`), with usage including cache reads and writes. For the pass-through tests:
 * what it received is compared byte for byte with what the client sent, and what it sent with
 * what the client received.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface RawExchange {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The bytes it answered with. */
  response: Buffer;
}

export interface RawUpstream {
  readonly url: string;
  readonly exchanges: RawExchange[];
  /** Usage numbers of the next answers. */
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /**
   * When set, a Messages request that offers a `Bash` tool and whose last user message holds no
   * tool_result is answered with a Bash tool call running this command.
   */
  bashCommand: string | undefined;
  /** When set, every answer is this HTTP status with an Anthropic-shaped error body. */
  errorStatus: number | undefined;
  /** When set, a streamed answer waits for this promise after its first event. */
  holdAfterFirstEvent: Promise<void> | undefined;
  close(): Promise<void>;
}

interface MessagesBody {
  readonly messages?: { role: string; content: unknown }[];
  readonly tools?: { name?: string }[];
}

function wantsBash(body: MessagesBody, command: string | undefined): boolean {
  if (command === undefined) return false;
  if (!(body.tools ?? []).some((tool) => tool.name === "Bash")) return false;
  const last = (body.messages ?? []).filter((message) => message.role === "user").at(-1);
  return !JSON.stringify(last ?? {}).includes('"tool_result"');
}

function bashAnswer(model: string, stream: boolean, command: string): string {
  const input = { command, description: "Print a greeting" };
  const block = { type: "tool_use", id: "toolu_01RawStub", name: "Bash", input };
  const usage = {
    input_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 6,
  };
  const message = {
    id: "msg_01RawStubTool",
    type: "message",
    role: "assistant",
    model,
    content: [block],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage,
  };
  if (!stream) return JSON.stringify(message);
  const events: [string, unknown][] = [
    [
      "message_start",
      { type: "message_start", message: { ...message, content: [], stop_reason: null } },
    ],
    [
      "content_block_start",
      { type: "content_block_start", index: 0, content_block: { ...block, input: {} } },
    ],
    [
      "content_block_delta",
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
      },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 6 },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

function anthropicAnswer(model: string, stream: boolean, usage: RawUpstream["usage"]): string {
  const message = {
    id: "msg_01RawStub",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "stub answer" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      cache_creation_input_tokens: usage.cacheWrite,
      cache_read_input_tokens: usage.cacheRead,
      output_tokens: usage.output,
    },
  };
  if (!stream) return JSON.stringify(message);
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { ...message.usage, output_tokens: 1 },
        },
      },
    ],
    [
      "content_block_start",
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ],
    ["ping", { type: "ping" }],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "stub " } },
    ],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "answer" } },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

function chatAnswer(model: string, stream: boolean, usage: RawUpstream["usage"]): string {
  const usageObject = {
    prompt_tokens: usage.input + usage.cacheRead,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.cacheRead + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead },
  };
  const base = { id: "chatcmpl-raw", created: 1764547200, model, system_fingerprint: null };
  if (!stream) {
    return JSON.stringify({
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "stub answer" },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: usageObject,
    });
  }
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`;
  return (
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]) +
    chunk([{ index: 0, delta: { content: "stub " }, finish_reason: null }]) +
    chunk([{ index: 0, delta: { content: "answer" }, finish_reason: null }]) +
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]) +
    chunk([], { usage: usageObject }) +
    "data: [DONE]\n\n"
  );
}

export async function startRawUpstream(): Promise<RawUpstream> {
  const exchanges: RawExchange[] = [];
  const state: RawUpstream = {
    url: "",
    exchanges,
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    bashCommand: undefined,
    errorStatus: undefined,
    holdAfterFirstEvent: undefined,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const exchange: RawExchange = {
      path: request.url ?? "",
      headers: request.headers,
      body,
      response: Buffer.alloc(0),
    };
    exchanges.push(exchange);
    if (state.errorStatus !== undefined) {
      exchange.response = Buffer.from(
        JSON.stringify({
          type: "error",
          error: { type: "overloaded_error", message: "Overloaded" },
        }),
      );
      response.writeHead(state.errorStatus, { "content-type": "application/json" });
      response.end(exchange.response);
      return;
    }
    const parsed = JSON.parse(body.toString("utf8")) as { model?: string; stream?: boolean };
    const stream = parsed.stream === true;
    const model = parsed.model ?? "";
    let text: string;
    if (exchange.path.startsWith("/v1/messages/count_tokens"))
      text = JSON.stringify({ input_tokens: 42 });
    else if (exchange.path.startsWith("/v1/messages")) {
      text = wantsBash(parsed as MessagesBody, state.bashCommand)
        ? bashAnswer(model, stream, state.bashCommand ?? "")
        : anthropicAnswer(model, stream, state.usage);
    } else text = chatAnswer(model, stream, state.usage);
    exchange.response = Buffer.from(text, "utf8");
    response.writeHead(200, {
      "content-type": stream ? "text/event-stream" : "application/json",
      "request-id": "req_raw_stub",
    });
    if (!stream) {
      response.end(exchange.response);
      return;
    }
    // Events one at a time, as a model sends them.
    for (const [index, piece] of text.split(/(?<=\n\n)/).entries()) {
      if (index === 1 && state.holdAfterFirstEvent !== undefined) await state.holdAfterFirstEvent;
      response.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return Object.assign(state, { url: `http://127.0.0.1:${port}` });
}
