/**
 * A local HTTP server that speaks one provider's wire format, for tests. Each request's exact
 * bytes are kept (`requests`), and each reply comes from a script: the text, thinking and tool
 * calls the "model" answers with. The wire writers (one file per format) lay out the JSON and
 * the server-sent events field by field as in the captured real bodies under
 * test/fixtures/providers/ (see SOURCES.md there). Streams are written in small pieces that
 * split UTF-8 sequences and SSE lines, as a real network may deliver them.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** The exact argument text the model writes (Gemini sends it as the parsed object). */
  readonly arguments: string;
}

export interface ScriptedRound {
  readonly thinking?: string;
  readonly text?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  readonly usage?: {
    readonly input: number;
    readonly output: number;
    readonly cacheRead?: number;
    readonly cacheWrite?: number;
  };
  /** Answer with this HTTP status and an error body instead. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  /** The exact bytes that arrived. */
  readonly body: Buffer;
}

/** What a wire writer produces for one scripted round. */
export interface WireReply {
  readonly contentType: string;
  readonly body: string;
}

export type WireWriter = (
  round: ScriptedRound,
  stream: boolean,
  model: string,
  turn: number,
) => WireReply;

export interface ProviderServer {
  /** The base URL to pass as `baseUrl` (already in the provider's convention). */
  readonly baseUrl: string;
  readonly requests: ReceivedRequest[];
  /** The next replies, used in order; when empty, `fallback` answers. */
  readonly script: ScriptedRound[];
  fallback: (request: ReceivedRequest) => ScriptedRound;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Writes bytes in pieces of `size` bytes (splitting UTF-8 sequences and lines on purpose). */
async function writeInPieces(
  response: import("node:http").ServerResponse,
  bytes: Buffer,
  size: number,
) {
  for (let offset = 0; offset < bytes.length; offset += size) {
    response.write(bytes.subarray(offset, offset + size));
    if (offset % (size * 16) === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

export async function startProviderServer(options: {
  readonly write: WireWriter;
  /** The path prefix of the base URL (e.g. "/v1" for OpenAI, "" for Anthropic). */
  readonly basePath: string;
  /** The model a request names, from its URL or body. */
  readonly modelOf: (request: ReceivedRequest) => string;
  readonly streamOf: (request: ReceivedRequest) => boolean;
}): Promise<ProviderServer> {
  const requests: ReceivedRequest[] = [];
  const script: ScriptedRound[] = [];
  let turn = 0;
  const state: ProviderServer = {
    baseUrl: "",
    requests,
    script,
    fallback: () => ({ text: "ok" }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const received: ReceivedRequest = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: await readBody(request),
      };
      requests.push(received);
      const round = script.shift() ?? state.fallback(received);
      if (round.status !== undefined && round.status >= 400) {
        response.writeHead(round.status, { "content-type": "application/json", ...round.headers });
        response.end(
          JSON.stringify({
            error: { type: "scripted_error", message: `scripted ${round.status}` },
          }),
        );
        return;
      }
      turn++;
      const stream = options.streamOf(received);
      const reply = options.write(round, stream, options.modelOf(received), turn);
      response.writeHead(200, { "content-type": reply.contentType, ...round.headers });
      await writeInPieces(response, Buffer.from(reply.body, "utf8"), stream ? 7 : 1 << 20);
    })().catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, { baseUrl: `http://127.0.0.1:${port}${options.basePath}` });
}

/** Text cut into pieces of a few code points (providers never split a code point). */
export function pieces(text: string, size = 3): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let index = 0; index < points.length; index += size)
    out.push(points.slice(index, index + size).join(""));
  return out;
}

export function sse(event: string | undefined, data: unknown): string {
  return (event === undefined ? "" : `event: ${event}\n`) + `data: ${JSON.stringify(data)}\n\n`;
}

export function bodyJson(request: ReceivedRequest): Record<string, unknown> {
  return JSON.parse(request.body.toString("utf8")) as Record<string, unknown>;
}
