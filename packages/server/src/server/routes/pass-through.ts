import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import type { ProviderId } from "verbatim-llm/providers";
import type { Sanitizer } from "verbatim-llm/trajectory";
import type { RecordedCalls } from "../../gateway/recording/calls.js";
import type { RecentRequests } from "../../gateway/recording/recent-requests.js";
import { wireMessagesKey, type WireFormat } from "../../gateway/recording/usage.js";
import { modelRoute } from "../../gateway/upstream/config.js";
import { parseJsonBodyText } from "../json-body.js";
import type { UpstreamConfig, UpstreamProvider } from "../upstream/config.js";
import { clientHeaders, forwardedHeaders, withoutAccountHeaders } from "./pass-through-headers.js";
import { readWhole, scrubError } from "./pass-through-errors.js";

/**
 * The pass-through routes' engine (docs/server/recorded-calls.md, "Recorded calls"): the client's request
 * goes to the upstream with the same method, path, query, headers and body bytes, except the
 * headers of ./pass-through-headers.ts (credentials: the subject's gateway key is replaced by
 * the provider key); the upstream's status, headers and body bytes go back to the client as
 * they arrive, except an error answer, read whole and scrubbed first (./pass-through-errors.ts). Once the upstream's answer has ended the call's bytes are committed, and only
 * then is the client's response ended; the call is placed in its chain right after
 * (gateway/recording/calls.ts).
 */

/** The body of a pass-through route: the bytes as sent and the JSON they hold. */
export interface RawJsonBody {
  readonly bytes: Buffer;
  /** The bytes decoded (UTF-8): what a recorded call stores. */
  readonly text: string;
  readonly value: unknown;
}

/** Kept-alive connections to the upstreams: no new TCP (and TLS) handshake per call. */
const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

const DEFAULT_BASE_URLS: Partial<Record<ProviderId, string>> = {
  anthropic: "https://api.anthropic.com",
  "openai-chat": "https://api.openai.com/v1",
  "openai-responses": "https://api.openai.com/v1",
  openrouter: "https://openrouter.ai/api/v1",
  gemini: "https://generativelanguage.googleapis.com/v1beta",
};

/**
 * Parses JSON bodies of the routes registered in `scope` and keeps their bytes. With `requests`
 * (the recorder's), a request that continues one of its subject's recent ones is parsed from
 * where the two part (gateway/recording/recent-requests.ts); any other is parsed whole.
 */
export function keepRawJsonBodies(scope: FastifyInstance, requests?: RecentRequests): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
    const subjectUid = request.subjectUid;
    // The member that grows from one request of a session to the next.
    const key = wireMessagesKey(
      request.url.startsWith("/v1beta/") ? "gemini-generate-content" : undefined,
    );
    const continued = requests?.continued(subjectUid, bytes, key);
    if (continued !== undefined) {
      done(null, rawJsonBody(bytes, continued));
      return;
    }
    parseJsonBodyText(bytes).then(
      ({ text, value }) => {
        requests?.remember(subjectUid, bytes, value, key);
        done(null, { bytes, text, value } satisfies RawJsonBody);
      },
      (error: unknown) => done(error as Error, undefined),
    );
  });
}

/**
 * A body whose value is known (its bytes UTF-8): its text is decoded when asked for. Not
 * enumerable: hooks that walk a body's fields (id-shape.ts) must not decode a large body.
 */
function rawJsonBody(bytes: Buffer, value: unknown): RawJsonBody {
  let text: string | undefined;
  const body = { bytes, value } as { bytes: Buffer; value: unknown; text: string };
  Object.defineProperty(body, "text", {
    enumerable: false,
    get: () => (text ??= bytes.toString("utf8")),
  });
  return body;
}

export function headerText(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export interface PassThroughTarget {
  readonly provider: ProviderId;
  readonly upstream: UpstreamProvider;
}

/** The upstream URL of a request: the provider's base URL and the path past `stripPrefix`. */
export function upstreamUrl(
  target: PassThroughTarget,
  requestUrl: string,
  stripPrefix: string,
): URL {
  const base = (target.upstream.baseUrl ?? DEFAULT_BASE_URLS[target.provider] ?? "").replace(
    /\/+$/,
    "",
  );
  const rest = requestUrl.startsWith(stripPrefix)
    ? requestUrl.slice(stripPrefix.length)
    : requestUrl;
  return new URL(`${base}${rest}`);
}

export interface PassThroughCall {
  readonly format: WireFormat;
  readonly target: PassThroughTarget;
  readonly url: URL;
  readonly body: RawJsonBody;
  /** The model when the path names it (Gemini); else the body's `model`. */
  readonly model?: string;
  readonly timeoutMs: number;
  /** Record the exchange (false for count_tokens). */
  readonly record: boolean;
  /** Scrubs an upstream's error answer (./pass-through-errors.ts). */
  readonly errorSanitizer: Sanitizer;
  /** Pass the client's OpenAI-Organization and OpenAI-Project on (the operator allows it). */
  readonly forwardOrganization: boolean;
}

/**
 * What the engine needs of a request and its response (fastifyExchange makes it of a routed
 * request), so that the engine never holds Fastify's request and reply themselves.
 */
export interface PassThroughExchange {
  readonly id: string;
  /** The request's path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The subject the request's API key acts for. */
  readonly subjectUid: string;
  readonly log: Pick<FastifyBaseLogger, "warn" | "error">;
  readonly response: ServerResponse;
  /** Takes the response over from the framework before its head is written. */
  hijack(): void;
}

/** The exchange of a request Fastify routed. */
export function fastifyExchange(request: FastifyRequest, reply: FastifyReply): PassThroughExchange {
  return {
    id: request.id,
    url: request.url,
    headers: request.headers,
    subjectUid: request.subjectUid,
    log: request.log,
    response: reply.raw,
    hijack: () => reply.hijack(),
  };
}

/** Sends the request upstream and the answer back; records it when asked. */
export async function passThrough(
  request: PassThroughExchange,
  recorder: RecordedCalls,
  call: PassThroughCall,
): Promise<void> {
  const started = performance.now();
  // Placing recorded calls waits while a call is sent or answered, not while it waits upstream.
  let idle: (() => void) | undefined;
  const secure = call.url.protocol === "https:";
  const requestHeaders = headerText(request.headers);
  const upstreamRequest = (secure ? httpsRequest : httpRequest)(call.url, {
    method: "POST",
    headers: forwardedHeaders(requestHeaders, call.target, call.forwardOrganization),
    agent: secure ? httpsAgent : httpAgent,
  });
  // The client hanging up stops the upstream call.
  const client = request.response;
  const onClientGone = () => {
    if (!client.writableFinished) upstreamRequest.destroy();
  };
  let statusCode = 0;
  let responseHeaders: Record<string, string> = {};
  let preparedRequest: ReturnType<RecordedCalls["prepareRequest"]> | undefined;
  const answer = await new Promise<RelayedAnswer>((resolve, reject) => {
    const timer = setTimeout(() => {
      upstreamRequest.destroy(
        new VerbatimError(
          "upstream_timeout",
          `the upstream sent no answer in ${call.timeoutMs} ms`,
          {
            hint: "Retry; raise VERBATIM_UPSTREAM_TIMEOUT_MS for slow models",
          },
        ),
      );
    }, call.timeoutMs);
    // The head goes on to the client and the body is relayed from the turn the head came in
    // (after an await, a turn later: 0.1 ms measured here after the upstream's think time).
    upstreamRequest.on("response", (response) => {
      clearTimeout(timer);
      statusCode = response.statusCode ?? 0;
      client.on("close", onClientGone);
      request.hijack();
      responseHeaders = withoutAccountHeaders(headerText(response.headers));
      // Marked here, so the finally below always ends it.
      if (call.record) idle = recorder.busy();
      if (statusCode < 400) {
        client.writeHead(statusCode, clientHeaders(responseHeaders, request.id));
        resolve(relayAnswer(response, client));
        return;
      }
      void readWhole(response).then((body) => {
        if (body === undefined) {
          resolve({ chunks: [], complete: false, held: [], sized: false });
          return;
        }
        const scrubbed = scrubError(body, responseHeaders, call.errorSanitizer);
        responseHeaders = scrubbed.headers;
        client.writeHead(statusCode, clientHeaders(responseHeaders, request.id));
        resolve({ chunks: [scrubbed.body], complete: true, held: [scrubbed.body], sized: true });
      });
    });
    upstreamRequest.on("error", (error) => {
      clearTimeout(timer);
      reject(
        error instanceof VerbatimError
          ? error
          : new VerbatimError("upstream_failed", "the upstream could not be reached", {
              hint: "Check the provider's base URL and that it is up; nothing was recorded",
            }),
      );
    });
    const sending = call.record ? recorder.busy() : undefined;
    try {
      upstreamRequest.end(call.body.bytes);
      // The request's part of its recording, while the upstream answers.
      if (call.record)
        preparedRequest = recorder.prepareRequest(request.subjectUid, call.body.bytes);
    } finally {
      sending?.();
    }
  });
  if (!answer.complete) request.log.warn({ err: answer.error }, "upstream answer broke off");
  let placed: Promise<unknown> | undefined;
  // Held pieces already written (before the commit, when it leaves the event loop free).
  let written = 0;
  try {
    if (call.record && answer.complete) {
      const value = call.body.value as Record<string, unknown>;
      const listed = value[wireMessagesKey(call.format)];
      const messages = Array.isArray(listed) ? (listed as unknown[]) : [];
      const keeping = recorder.keep({
        subjectUid: request.subjectUid,
        format: call.format,
        path: request.url,
        model: call.model ?? (typeof value["model"] === "string" ? value["model"] : ""),
        messages,
        requestHeaders,
        requestBody: call.body.bytes,
        statusCode,
        responseHeaders,
        responseBody:
          answer.chunks.length === 1 ? (answer.chunks[0] as Buffer) : Buffer.concat(answer.chunks),
        durationMs: performance.now() - started,
        ...(preparedRequest === undefined ? {} : { preparedRequest }),
      });
      // A commit that is a round trip (PostgreSQL) leaves the event loop free: what does not
      // complete the answer goes to the client while it runs (the client reads the head and the
      // body meanwhile; the socket's write leaves after the commit's statement, at the turn's
      // end). A commit that holds the thread (SQLite): everything in one write after it.
      if (!recorder.commitHoldsThread) written = writeBeforeCommit(client, answer);
      placed = (await keeping).placed;
    }
  } catch (error) {
    request.log.error({ err: error }, "recording the call failed; the client got its answer");
  } finally {
    client.off("close", onClientGone);
    // An answer that broke off ends the connection: ending the response would hand the client
    // a chunked body's terminator, a cut answer that looks whole.
    if (!answer.complete) client.destroy();
    // The held pieces not written yet go with the end (one write: the socket is corked until
    // the turn's end).
    else {
      const last = answer.held.length - 1;
      for (let index = written; index < last; index++) client.write(answer.held[index]);
      if (last < written) client.end();
      else client.end(answer.held[last]);
    }
    idle?.();
  }
  // Placed in its chain after the answer; the handler (which close() waits for) ends after it.
  await placed?.catch((error: unknown) =>
    request.log.error(
      { err: error },
      "placing the recorded call in its chain failed; its bytes are stored, and it is placed again by its subject's next call or at the next start",
    ),
  );
}

/**
 * Writes the held pieces that do not complete the answer: all of a chunked answer's (its end
 * writes the terminator), all but the last of a sized one's. Returns how many were written.
 */
function writeBeforeCommit(client: ServerResponse, answer: RelayedAnswer): number {
  const count = answer.sized ? Math.max(0, answer.held.length - 1) : answer.held.length;
  for (let index = 0; index < count; index++) client.write(answer.held[index]);
  return count;
}

/** The upstream's answer as relayed: its pieces, and the last ones when they were held back. */
interface RelayedAnswer {
  /** Every piece of the body as received (the held ones included). */
  readonly chunks: Buffer[];
  /** The answer ended as the upstream sent it (false: it broke off, or the client left). */
  readonly complete: boolean;
  /** The last pieces, not written yet: they are written with the response's end. */
  readonly held: readonly Buffer[];
  /** The upstream declared the answer's length (its last byte completes it). */
  readonly sized: boolean;
  readonly error?: unknown;
}

/**
 * Writes the upstream's answer to the client as it arrives, except what completes it: that is
 * held and written with the response's end, after the call's commit. So a client never has the
 * whole answer before its bytes are durable (a chunked response is whole only with its
 * terminator, which the end writes; a sized one with its last byte), and an answer that comes
 * in one read from the upstream leaves in one write after the commit.
 *
 * A piece is written once the event loop has handled what arrived with it (setImmediate: the
 * same turn of the loop, microseconds later), so a piece followed in the same read by the
 * answer's end is known to be the last and is held. Written at once instead, it went out in a
 * write of its own before the commit and the end's terminator in a second one after it: each
 * write to a local client wakes it, measured here at 0.5–1 ms of the answer's path after the
 * upstream's think time (the commit waited for it). A streamed answer whose events arrive one
 * read at a time is written as it comes, each piece in the turn it arrived.
 */
function relayAnswer(upstream: IncomingMessage, client: ServerResponse): Promise<RelayedAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const length = upstream.headers["content-length"];
    const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : -1;
    let received = 0;
    // Pieces received and not written yet, and the turn's write of them.
    let pending: Buffer[] = [];
    let writing: NodeJS.Immediate | undefined;
    let settled = false;
    const writePending = () => {
      writing = undefined;
      for (const piece of pending) client.write(piece);
      pending = [];
    };
    // The pending pieces, no longer written by the turn's write.
    const takePending = (): Buffer[] => {
      if (writing !== undefined) clearImmediate(writing);
      writing = undefined;
      const taken = pending;
      pending = [];
      return taken;
    };
    const whole = () => {
      if (settled) return;
      settled = true;
      resolve({ chunks, complete: true, held: takePending(), sized: declared >= 0 });
    };
    const brokeOff = (error: unknown) => {
      if (settled) return;
      settled = true;
      for (const piece of takePending()) client.write(piece);
      resolve({ chunks, complete: false, held: [], sized: declared >= 0, error });
    };
    upstream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      pending.push(chunk);
      // The declared length is complete: the answer is whole now, before its 'end' (which
      // comes after the client's keep-alive bookkeeping: 0.3 ms later measured here).
      if (received === declared) whole();
      else writing ??= setImmediate(writePending);
    });
    // A chunked answer is whole at its 'end' (stream.finished would wait for the message's
    // 'close' as well: measured here 0.3 ms later back to back and 0.7 ms after 20 ms of
    // upstream think time, all of it on the answer's path: the commit waits for the whole).
    upstream.once("end", whole);
    upstream.once("error", brokeOff);
    upstream.once("close", () => {
      if (!upstream.readableEnded) {
        brokeOff(upstream.errored ?? new Error("the upstream's answer closed before its end"));
      }
    });
  });
}

/** The body's model, or a clear 400. */
export function modelOf(body: RawJsonBody): string {
  const value = body.value;
  const model =
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)["model"]
      : undefined;
  if (typeof model !== "string" || model === "") {
    throw new VerbatimError("invalid_request", "the body names no model", {
      where: "body.model",
      hint: "Send a JSON object with a model string; nothing was sent upstream",
    });
  }
  return model;
}

/** The configured upstream of a wire format for a model. */
export function targetFor(
  config: UpstreamConfig,
  model: string,
  accepted: readonly ProviderId[],
  /** Where the request names the model (for the error). */
  where = "body.model",
): PassThroughTarget {
  const route = modelRoute(config, model);
  const routed =
    route !== undefined && accepted.includes(route.provider) ? route.provider : undefined;
  const provider = [routed, ...accepted].find(
    (candidate): candidate is ProviderId =>
      candidate !== undefined && config.providers[candidate] !== undefined,
  );
  const upstream = provider === undefined ? undefined : config.providers[provider];
  if (provider === undefined || upstream === undefined) {
    throw new VerbatimError(
      "upstream_not_configured",
      `no ${accepted.join(" or ")} upstream is configured for the model "${model}"`,
      {
        where,
        hint:
          accepted[0] === "anthropic"
            ? "Start the server with ANTHROPIC_API_KEY set (and ANTHROPIC_BASE_URL for another endpoint)"
            : accepted[0] === "gemini"
              ? "Start the server with GEMINI_API_KEY set (and GEMINI_BASE_URL for another endpoint)"
              : "Start the server with OPENAI_API_KEY (or OPENROUTER_API_KEY) set, and OPENAI_BASE_URL for another endpoint",
      },
    );
  }
  return { provider, upstream };
}
