/**
 * A local upstream that speaks Google's Gemini API (generativelanguage.googleapis.com/v1beta):
 * POST /v1beta/models/{model}:generateContent (one JSON body), :streamGenerateContent with
 * `?alt=sse` (server-sent events) or without (one JSON array, streamed), and :countTokens.
 *
 * Its answers are bodies captured from the real API (test/fixtures/gemini-api/, SOURCES.md says
 * where each came from): a captured body is sent byte for byte when the request asks for the
 * form it was captured in; otherwise (another form, or a scripted text or function call in
 * place of the captured one) its chunks are laid out the way the API frames that form:
 * - JSON: the response pretty-printed with two spaces, as the captured unary bodies are;
 * - SSE: `data: ` + the chunk in the API's spacing (`{"key": value,"key": value}`) + CRLF CRLF;
 * - JSON array: `[` + each chunk pretty-printed, joined by `\n,\r\n`, + `\n]`.
 *
 * Every request is kept (`requests`): path and query as received, headers, body bytes, so a test
 * can check what reached the model (for instance that no gateway key did).
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

const FIXTURES = new URL("../fixtures/gemini-api/", import.meta.url);

export type GeminiMethod = "generateContent" | "streamGenerateContent" | "countTokens";

/** A JSON object as the API sends or receives it. */
export type GeminiObject = Record<string, unknown>;

/** One request the upstream received. */
export interface GeminiRequestSeen {
  readonly method: GeminiMethod;
  readonly model: string;
  /** Path and query as received (`/v1beta/models/…:streamGenerateContent?alt=sse`). */
  readonly url: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The body's bytes as received. */
  readonly bytes: Buffer;
  /** The body parsed (`{}` when it was not JSON). */
  readonly body: GeminiObject;
}

/** An answer: the response chunks in order, and the captured bytes of the forms it came in. */
export interface GeminiReply {
  readonly chunks: readonly GeminiObject[];
  readonly captured?: { readonly json?: Buffer; readonly sse?: Buffer };
}

/** An error answer, sent as it is. */
export interface GeminiErrorReply {
  readonly status: number;
  readonly body: Buffer | string;
}

function fixtureBytes(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

/** The chunks of a captured SSE body (one per `data:` line). */
export function sseChunks(bytes: Buffer): GeminiObject[] {
  return bytes
    .toString("utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5).trim()) as GeminiObject);
}

/** A reply captured as a JSON body, an SSE body, or both (the same answer in two forms). */
export function capturedReply(files: { json?: string; sse?: string }): GeminiReply {
  const json = files.json === undefined ? undefined : fixtureBytes(files.json);
  const sse = files.sse === undefined ? undefined : fixtureBytes(files.sse);
  const chunks =
    sse !== undefined
      ? sseChunks(sse)
      : [JSON.parse((json as Buffer).toString("utf8")) as GeminiObject];
  return {
    chunks,
    captured: { ...(json === undefined ? {} : { json }), ...(sse === undefined ? {} : { sse }) },
  };
}

/** The captured answers (test/fixtures/gemini-api/SOURCES.md). */
export const CAPTURED = {
  /** gemini-2.5-flash, "Hello!" (JSON) / "1, 2, 3" in one SSE chunk; thoughtsTokenCount. */
  textJson: capturedReply({ json: "text.json" }),
  textStream: capturedReply({ sse: "text-stream.sse" }),
  /** gemini-2.5-pro: a thought summary part (`thought: true`), then `functionCall` now() with
   * its `thoughtSignature`: JSON, and (gemini-2.5-flash) the same turn streamed in 3 chunks. */
  thinkingFunctionCallJson: capturedReply({ json: "thinking-function-call.json" }),
  thinkingFunctionCallStream: capturedReply({ sse: "thinking-function-call-stream.sse" }),
  /** gemini-2.5-flash, getWeather({location: "Tokyo"}) with a thoughtSignature (one SSE chunk). */
  functionCallStream: capturedReply({ sse: "function-call-stream.sse" }),
  /** The answer after the function's result, in two SSE chunks (Japanese text). */
  functionResultStream: capturedReply({ sse: "function-result-stream.sse" }),
  /** gemini-2.5-flash with implicit caching: cachedContentTokenCount 11243 of 12013 (JSON). */
  implicitCacheJson: capturedReply({ json: "implicit-cache.json" }),
} as const;

/** The captured answer to a request with an API key the API does not know (status 400). */
export const API_KEY_ERROR: GeminiErrorReply = {
  status: 400,
  body: fixtureBytes("api-key-error.json"),
};

/** Captured request bodies (a growing session with a function call, an image). */
export const CAPTURED_REQUESTS = {
  /** gemini-2.5-flash: a user question and a getWeather declaration (snake_case fields). */
  functionCall: fixtureBytes("function-call-request.json"),
  /** The same session one turn later: the model's function_call and the function_response. */
  functionResult: fixtureBytes("function-result-request.json"),
  /** A user text and an inlineData JPEG (8×8, green). */
  image: fixtureBytes("image-request.json"),
} as const;

function partsOf(chunk: GeminiObject): GeminiObject[] | undefined {
  const candidates = chunk["candidates"] as GeminiObject[] | undefined;
  const content = candidates?.[0]?.["content"] as GeminiObject | undefined;
  return content?.["parts"] as GeminiObject[] | undefined;
}

function withParts(chunk: GeminiObject, parts: GeminiObject[]): GeminiObject {
  const candidates = (chunk["candidates"] as GeminiObject[]).map((candidate, index) =>
    index === 0
      ? { ...candidate, content: { ...(candidate["content"] as GeminiObject), parts } }
      : candidate,
  );
  return { ...chunk, candidates };
}

const isAnswerText = (part: GeminiObject) =>
  typeof part["text"] === "string" && part["thought"] !== true;

/**
 * `base` (default: the captured text stream) answering `text` instead: the first chunk's answer
 * text becomes `text`, later chunks' answer texts are left out (thought parts and signatures
 * stay).
 */
export function textReply(text: string, base: GeminiReply = CAPTURED.textStream): GeminiReply {
  let placed = false;
  const chunks = base.chunks.map((chunk) => {
    const parts = partsOf(chunk);
    if (parts === undefined) return chunk;
    const next: GeminiObject[] = [];
    for (const part of parts) {
      if (!isAnswerText(part)) next.push(part);
      else if (!placed) {
        next.push({ ...part, text });
        placed = true;
      }
    }
    return withParts(chunk, next);
  });
  if (!placed) throw new Error("textReply: the base reply has no answer text to replace");
  return { chunks };
}

/**
 * `base` (default: the captured streamed thought + function call) calling `calls` instead: the
 * first captured functionCall part becomes the first call (its thoughtSignature kept), the
 * others follow it in the same chunk.
 */
export function functionCallReply(
  calls: readonly { readonly name: string; readonly args: GeminiObject }[],
  base: GeminiReply = CAPTURED.thinkingFunctionCallStream,
): GeminiReply {
  let placed = false;
  const chunks = base.chunks.map((chunk) => {
    const parts = partsOf(chunk);
    if (parts === undefined) return chunk;
    const next: GeminiObject[] = [];
    for (const part of parts) {
      if (part["functionCall"] === undefined) next.push(part);
      else if (!placed) {
        calls.forEach((call, index) =>
          next.push(
            index === 0
              ? { ...part, functionCall: { name: call.name, args: call.args } }
              : { functionCall: { name: call.name, args: call.args } },
          ),
        );
        placed = true;
      }
    }
    return withParts(chunk, next);
  });
  if (!placed) throw new Error("functionCallReply: the base reply has no functionCall to replace");
  return { chunks };
}

/** `base` with the last chunk's usageMetadata fields set (e.g. cachedContentTokenCount). */
export function withUsage(base: GeminiReply, usage: Record<string, number>): GeminiReply {
  const last = base.chunks.length - 1;
  const chunks = base.chunks.map((chunk, index) =>
    index === last
      ? { ...chunk, usageMetadata: { ...(chunk["usageMetadata"] as GeminiObject), ...usage } }
      : chunk,
  );
  return { chunks };
}

/** JSON in the spacing of the API's SSE data lines: `": "` after a key, no space after `,`. */
export function sseJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sseJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value as GeminiObject)
      .filter(([, member]) => member !== undefined)
      .map(([key, member]) => `${JSON.stringify(key)}: ${sseJson(member)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The one response a JSON answer holds: the chunks' parts in order, the last chunk's rest. */
export function mergedResponse(chunks: readonly GeminiObject[]): GeminiObject {
  const parts: GeminiObject[] = [];
  for (const chunk of chunks) {
    for (const part of partsOf(chunk) ?? []) {
      const previous = parts[parts.length - 1];
      // Streamed text pieces of one part arrive as several parts: a JSON answer has them whole.
      const sameText =
        previous !== undefined &&
        typeof previous["text"] === "string" &&
        typeof part["text"] === "string" &&
        previous["thought"] === part["thought"] &&
        previous["thoughtSignature"] === undefined;
      if (sameText)
        parts[parts.length - 1] = {
          ...part,
          text: `${String(previous["text"])}${String(part["text"])}`,
        };
      else parts.push(part);
    }
  }
  const last = chunks[chunks.length - 1] ?? {};
  return partsOf(last) === undefined ? last : withParts(last, parts);
}

/** The body of `reply` in the form a request asks for. */
export function replyBody(reply: GeminiReply, form: "json" | "sse" | "array"): Buffer {
  if (form === "json") {
    return (
      reply.captured?.json ??
      Buffer.from(`${JSON.stringify(mergedResponse(reply.chunks), null, 2)}\n`)
    );
  }
  if (form === "sse") {
    return (
      reply.captured?.sse ??
      Buffer.from(reply.chunks.map((chunk) => `data: ${sseJson(chunk)}\r\n\r\n`).join(""))
    );
  }
  return Buffer.from(
    `[${reply.chunks.map((chunk) => JSON.stringify(chunk, null, 2)).join("\n,\r\n")}\n]`,
  );
}

export interface GeminiUpstream {
  /** The server's origin (`http://127.0.0.1:port`). */
  readonly url: string;
  /** The base URL a Gemini client or the gateway's GEMINI_BASE_URL takes (`url` + `/v1beta`). */
  readonly baseUrl: string;
  readonly requests: GeminiRequestSeen[];
  /** The answer to a generateContent or streamGenerateContent request (default: an echo). */
  reply: (request: GeminiRequestSeen) => GeminiReply | GeminiErrorReply;
  /** The key requests must carry (x-goog-api-key or ?key=); others get the captured 400. */
  apiKey: string | undefined;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  close(): Promise<void>;
}

function lastUserText(body: GeminiObject): string {
  const contents = body["contents"] as GeminiObject[] | undefined;
  const last = contents?.[contents.length - 1];
  const parts = (last?.["parts"] as GeminiObject[] | undefined) ?? [];
  return parts.map((part) => (typeof part["text"] === "string" ? part["text"] : "")).join("");
}

const ROUTE = /^\/v1beta\/models\/([^/:?]+):(generateContent|streamGenerateContent|countTokens)$/;

function googleError(status: number, message: string, code: string): GeminiErrorReply {
  return {
    status,
    body: `${JSON.stringify({ error: { code: status, message, status: code } }, null, 2)}\n`,
  };
}

function isError(reply: GeminiReply | GeminiErrorReply): reply is GeminiErrorReply {
  return "status" in reply;
}

/** Starts the stub on a free loopback port. */
export async function startGeminiUpstream(
  options: { readonly apiKey?: string } = {},
): Promise<GeminiUpstream> {
  const requests: GeminiRequestSeen[] = [];
  const state: GeminiUpstream = {
    url: "",
    baseUrl: "",
    requests,
    reply: (request) => textReply(`You said: ${lastUserText(request.body)}`),
    apiKey: options.apiKey,
    delayMs: 0,
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const pieces: Buffer[] = [];
      for await (const piece of request) pieces.push(piece as Buffer);
      const bytes = Buffer.concat(pieces);
      const url = new URL(request.url ?? "/", "http://upstream");
      const match = ROUTE.exec(url.pathname);
      const send = (status: number, contentType: string, body: Buffer | string) => {
        response.writeHead(status, { "content-type": contentType });
        response.end(body);
      };
      if (request.method !== "POST" || match === null) {
        const error = googleError(404, `Not found: ${url.pathname}`, "NOT_FOUND");
        send(error.status, "application/json; charset=UTF-8", error.body);
        return;
      }
      let body: GeminiObject = {};
      try {
        body = JSON.parse(bytes.toString("utf8")) as GeminiObject;
      } catch {
        const error = googleError(400, "Invalid JSON payload received.", "INVALID_ARGUMENT");
        send(error.status, "application/json; charset=UTF-8", error.body);
        return;
      }
      const seen: GeminiRequestSeen = {
        method: match[2] as GeminiMethod,
        model: decodeURIComponent(match[1] as string),
        url: request.url ?? "",
        query: url.searchParams,
        headers: request.headers,
        bytes,
        body,
      };
      requests.push(seen);
      const key = request.headers["x-goog-api-key"] ?? url.searchParams.get("key") ?? undefined;
      if (state.apiKey !== undefined && key !== state.apiKey) {
        send(API_KEY_ERROR.status, "application/json; charset=UTF-8", API_KEY_ERROR.body);
        return;
      }
      if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (seen.method === "countTokens") {
        const totalTokens = Math.max(1, Math.round(bytes.length / 4));
        const counted = {
          totalTokens,
          promptTokensDetails: [{ modality: "TEXT", tokenCount: totalTokens }],
        };
        send(200, "application/json; charset=UTF-8", `${JSON.stringify(counted, null, 2)}\n`);
        return;
      }
      const reply = state.reply(seen);
      if (isError(reply)) {
        send(reply.status, "application/json; charset=UTF-8", reply.body);
        return;
      }
      if (seen.method === "generateContent") {
        send(200, "application/json; charset=UTF-8", replyBody(reply, "json"));
        return;
      }
      const sse = url.searchParams.get("alt") === "sse";
      response.writeHead(200, {
        "content-type": sse ? "text/event-stream" : "application/json; charset=UTF-8",
      });
      // Sent a chunk at a time, as the API streams them.
      if (sse) {
        const whole = replyBody(reply, "sse").toString("utf8");
        for (const event of whole.split(/(?<=\r?\n\r?\n)/)) response.write(event);
      } else {
        const whole = replyBody(reply, "array").toString("utf8");
        for (const piece of whole.split(/(?=\n,\r\n)/)) response.write(piece);
      }
      response.end();
    })();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1beta`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
