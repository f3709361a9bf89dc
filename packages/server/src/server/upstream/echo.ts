/**
 * The demo upstream: a model endpoint on loopback that speaks the Anthropic Messages API
 * (POST /v1/messages, streamed or not, and its count_tokens) and OpenAI Chat Completions
 * (POST /v1/chat/completions, ./echo-chat.ts), and answers by the rule of ./echo-answer.ts,
 * without any provider key or network. `verbatim serve --upstream echo` starts it and routes
 * every model and every pass-through route to it, so the server's whole path (render,
 * transport, stream parsing, storage) runs as it does against a real provider.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PROVIDER_IDS } from "verbatim-llm/providers";
import { PROVIDER_KEY_VARIABLES, PROVIDER_URL_VARIABLES } from "../../gateway/upstream/config.js";
import { echoAnswer, EchoRequestError, type EchoAnswer } from "./echo-answer.js";
import { chatChunks, chatCompletion, messagesBodyOfChat } from "./echo-chat.js";
import { pieces, slices, tokensOf } from "./echo-pieces.js";

/** The model name the echo reports in every answer. */
export const ECHO_MODEL = "echo";

export interface EchoUpstream {
  /** `http://127.0.0.1:<port>`: the base URL, as ANTHROPIC_BASE_URL would be. */
  readonly url: string;
  close(): Promise<void>;
}

const MESSAGES = "/v1/messages";
const COUNT_TOKENS = "/v1/messages/count_tokens";
const CHAT_COMPLETIONS = "/v1/chat/completions";
const PATHS = new Set([MESSAGES, COUNT_TOKENS, CHAT_COMPLETIONS]);

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on("data", (chunk: Buffer) => parts.push(chunk));
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

function sendError(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(
    JSON.stringify({ type: "error", error: { type: "invalid_request_error", message } }),
  );
}

/** The answer as Anthropic content blocks. */
function contentOf(answer: EchoAnswer, callId: string): Record<string, unknown>[] {
  return answer.kind === "text"
    ? [{ type: "text", text: answer.text }]
    : [{ type: "tool_use", id: callId, name: answer.name, input: answer.input }];
}

function sendJson(response: ServerResponse, value: unknown): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(value));
}

/** Writes server-sent events, each in its own turn, so that a reader sees them arrive apart. */
async function sendEvents(response: ServerResponse, events: readonly string[]): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) {
    response.write(event);
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

function streamEvents(
  answer: EchoAnswer,
  id: string,
  callId: string,
  inputTokens: number,
  outputTokens: number,
): Record<string, unknown>[] {
  const start = {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: ECHO_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 0 },
    },
  };
  const deltas =
    answer.kind === "text"
      ? [
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          ...pieces(answer.text).map((text) => ({
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text },
          })),
        ]
      : [
          {
            type: "content_block_start",
            index: 0,
            content_block: { type: "tool_use", id: callId, name: answer.name, input: {} },
          },
          ...slices(JSON.stringify(answer.input)).map((partial) => ({
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: partial },
          })),
        ];
  return [
    start,
    ...deltas,
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: answer.kind === "text" ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: outputTokens },
    },
    { type: "message_stop" },
  ];
}

/** Starts the echo upstream on 127.0.0.1 (a free port). */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  let count = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const path = request.url?.split("?")[0] ?? "";
      if (request.method !== "POST" || !PATHS.has(path)) {
        sendError(response, 404, `the echo upstream answers POST ${[...PATHS].join(", ")} only`);
        return;
      }
      const text = await readBody(request);
      let body: unknown;
      let answer: EchoAnswer;
      try {
        body = JSON.parse(text);
        if (path === COUNT_TOKENS) {
          sendJson(response, { input_tokens: tokensOf(text) });
          return;
        }
        answer = echoAnswer(path === CHAT_COMPLETIONS ? messagesBodyOfChat(body) : body);
      } catch (error) {
        const reason = error instanceof EchoRequestError ? error.message : "the body is not JSON";
        sendError(response, 400, reason);
        return;
      }
      count += 1;
      const inputTokens = tokensOf(text);
      const outputTokens = tokensOf(
        answer.kind === "text" ? answer.text : JSON.stringify(answer.input),
      );
      const stream = (body as { stream?: unknown }).stream === true;
      if (path === CHAT_COMPLETIONS) {
        const ids = {
          id: `chatcmpl-echo${count}`,
          callId: `call_echo_${count}`,
          inputTokens,
          outputTokens,
        };
        if (!stream) {
          sendJson(response, chatCompletion(answer, ids, ECHO_MODEL));
          return;
        }
        const options = (body as { stream_options?: { include_usage?: unknown } }).stream_options;
        const chunks = chatChunks(answer, ids, ECHO_MODEL, options?.include_usage === true);
        await sendEvents(response, [
          ...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`),
          "data: [DONE]\n\n",
        ]);
        return;
      }
      const id = `msg_echo_${count}`;
      const callId = `toolu_echo_${count}`;
      if (!stream) {
        sendJson(response, {
          id,
          type: "message",
          role: "assistant",
          model: ECHO_MODEL,
          content: contentOf(answer, callId),
          stop_reason: answer.kind === "text" ? "end_turn" : "tool_use",
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: outputTokens },
        });
        return;
      }
      await sendEvents(
        response,
        streamEvents(answer, id, callId, inputTokens, outputTokens).map(
          (event) => `event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`,
        ),
      );
    })().catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, String(error));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The environment that routes every model to the echo: the server reads its upstreams from the
 * environment (docs/server/README.md, "Configuration"), and the echo stands where Anthropic's and
 * OpenAI's APIs would. Every other provider key and base URL is dropped, so no route can reach
 * a real provider with the operator's key.
 */
export function echoEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  echo: EchoUpstream,
): Record<string, string | undefined> {
  const kept: Record<string, string | undefined> = { ...env };
  for (const provider of PROVIDER_IDS) {
    for (const name of PROVIDER_KEY_VARIABLES[provider]) delete kept[name];
    delete kept[PROVIDER_URL_VARIABLES[provider]];
  }
  return {
    ...kept,
    ANTHROPIC_API_KEY: "echo",
    ANTHROPIC_BASE_URL: echo.url,
    OPENAI_API_KEY: "echo",
    OPENAI_BASE_URL: `${echo.url}/v1`,
    VERBATIM_MODEL_PROVIDERS: "*=anthropic",
  };
}
