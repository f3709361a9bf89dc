/**
 * A local upstream that speaks the Anthropic Messages API wire format (POST /v1/messages, JSON
 * or server-sent events), for server tests and benchmarks. The event sequence and field names
 * follow streams captured from api.anthropic.com (message_start, content_block_start/delta/
 * stop with text_delta and input_json_delta, message_delta with stop_reason and usage,
 * message_stop), as Anthropic's streaming documentation shows them.
 *
 * Each request's body is kept (`requests`), so tests can check what the model was sent.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

export interface ScriptedReply {
  readonly text?: string;
  readonly toolCalls?: readonly {
    readonly id: string;
    readonly name: string;
    readonly input: unknown;
  }[];
  /** An HTTP error instead of a message. */
  readonly status?: number;
  readonly stopReason?: "end_turn" | "tool_use" | "max_tokens";
}

export interface AnthropicUpstream {
  readonly url: string;
  /** Bodies received, parsed, in order. */
  readonly requests: Record<string, unknown>[];
  /** The reply to the next requests (default: echo of the last user text). */
  reply: (body: Record<string, unknown>) => ScriptedReply;
  /** Milliseconds to wait before answering, counted from the request's arrival. */
  delayMs: number;
  /** Milliseconds a streamed answer waits after its first event (the model still writing). */
  streamPauseMs: number;
  /** How it waits until `deadline` (performance.now() time); default setTimeout. */
  waitUntil: (deadline: number) => Promise<void>;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = body["messages"] as { role: string; content: unknown }[] | undefined;
  const last = messages?.[messages.length - 1];
  if (last === undefined) return "";
  if (typeof last.content === "string") return last.content;
  const parts = last.content as { type: string; text?: string }[];
  return parts
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("");
}

let counter = 0;

function events(body: Record<string, unknown>, reply: ScriptedReply): [string, unknown][] {
  const id = `msg_01Upstream${(counter++).toString().padStart(6, "0")}`;
  const model = String(body["model"]);
  const out: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 25,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 1,
          },
        },
      },
    ],
  ];
  let index = 0;
  if (reply.text !== undefined) {
    out.push([
      "content_block_start",
      { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ]);
    out.push(["ping", { type: "ping" }]);
    const words = reply.text.match(/\S+\s*|\s+/g) ?? [reply.text];
    for (const word of words) {
      out.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "text_delta", text: word } },
      ]);
    }
    out.push(["content_block_stop", { type: "content_block_stop", index }]);
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    out.push([
      "content_block_start",
      {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      },
    ]);
    const json = JSON.stringify(call.input);
    const half = Math.floor(json.length / 2);
    for (const part of [json.slice(0, half), json.slice(half)]) {
      out.push([
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: part },
        },
      ]);
    }
    out.push(["content_block_stop", { type: "content_block_stop", index }]);
    index++;
  }
  const stopReason =
    reply.stopReason ?? ((reply.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn");
  out.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 15 },
    },
  ]);
  out.push(["message_stop", { type: "message_stop" }]);
  return out;
}

function messageJson(body: Record<string, unknown>, reply: ScriptedReply): unknown {
  const content: unknown[] = [];
  if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
  for (const call of reply.toolCalls ?? []) content.push({ type: "tool_use", ...call });
  return {
    id: `msg_01Upstream${(counter++).toString().padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: body["model"],
    content,
    stop_reason: reply.stopReason ?? ((reply.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens: 25,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 15,
    },
  };
}

export async function startAnthropicUpstream(): Promise<AnthropicUpstream> {
  const requests: Record<string, unknown>[] = [];
  const state: AnthropicUpstream = {
    url: "",
    requests,
    reply: (body) => ({ text: `You said: ${lastUserText(body)}` }),
    delayMs: 0,
    streamPauseMs: 0,
    waitUntil: (deadline) =>
      new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - performance.now()))),
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((request, response) => {
    const arrived = performance.now();
    void (async () => {
      const text = await readBody(request);
      if (request.method !== "POST" || !request.url?.startsWith("/v1/messages")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            type: "error",
            error: { type: "not_found_error", message: "Not found" },
          }),
        );
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown>;
      requests.push(body);
      if (state.delayMs > 0) await state.waitUntil(arrived + state.delayMs);
      const reply = state.reply(body);
      if (reply.status !== undefined) {
        response.writeHead(reply.status, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            type: "error",
            error: { type: "invalid_request_error", message: `scripted ${reply.status}` },
          }),
        );
        return;
      }
      if (body["stream"] === true) {
        response.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
        });
        for (const [index, [event, data]] of events(body, reply).entries()) {
          if (index === 1 && state.streamPauseMs > 0) {
            await new Promise((resolve) => setTimeout(resolve, state.streamPauseMs));
          }
          response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        }
        response.end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(messageJson(body, reply)));
    })();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
