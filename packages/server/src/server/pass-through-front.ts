import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import type { ApiKeyLookup } from "./api-key-cache.js";
import { apiKeyOf } from "./auth.js";
import { sendResponseError, toVerbatimError } from "./errors.js";
import type { FailedAuthenticationLimit } from "./failed-authentication.js";
import type { InFlightWork } from "./in-flight.js";
import { declaredEncodingProblem, parseJsonBodyText } from "./json-body.js";
import type { RateLimiter } from "./rate-limit.js";
import { passThrough, type PassThroughExchange } from "./routes/pass-through.js";
import { passThroughCall, type PassThroughRouteServing } from "./routes/pass-through-routes.js";

/**
 * The server's front path for the pass-through routes (docs/server.md, "Recorded calls"): a
 * request over HTTP to POST /v1/messages, /v1/messages/count_tokens or /v1/chat/completions
 * that will be served is served here, before Fastify's router, by the same engine
 * (routes/pass-through.ts), so a recorded call pays for its authentication, its body and its
 * commit and not for the framework's per-request work (a third of a millisecond measured here,
 * about half of what a bare proxy costs). Whatever is decided from the request's head goes to
 * Fastify untouched, so every refusal keeps its one answer: a request the router would refuse
 * or answer otherwise (a closing server, another method or path, a body that is not declared as
 * JSON in UTF-8 or is larger than the limit, no body, a missing, unknown or revoked key, an
 * address over the failed-authentication limit, a key over its rate limit) is handed to it
 * before a byte of its body is read. What is refused once the body is read (not UTF-8, not JSON,
 * no model or one the store cannot hold, no upstream for it, the upstream unreachable) is
 * answered here in the one error shape, as the router answers it. Injected requests (tests)
 * always take the router.
 */
export interface PassThroughFrontOptions {
  readonly keys: ApiKeyLookup;
  readonly limiter: RateLimiter | undefined;
  readonly failures: FailedAuthenticationLimit | undefined;
  readonly bodyLimit: number;
  readonly log: FastifyBaseLogger;
  /** The server's in-flight handlers: close waits for them. */
  readonly work: InFlightWork;
  readonly closing: () => boolean;
  /** The request id of a request (the client's x-request-id when well formed). */
  readonly requestId: (request: IncomingMessage) => string;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The pass-through routes' front path (its count of served requests, for operators and tests). */
    readonly passThroughFront: PassThroughFront;
  }
}

export class PassThroughFront {
  readonly #routes = new Map<string, PassThroughRouteServing>();
  #options: PassThroughFrontOptions | undefined;
  #served = 0;

  /** Requests served here since the server started (the rest took the router). */
  get served(): number {
    return this.#served;
  }

  /** Starts serving `routes` here, with the server's checks (set once they exist). */
  enable(options: PassThroughFrontOptions, routes: readonly PassThroughRouteServing[]): void {
    this.#options = options;
    for (const entry of routes) this.#routes.set(entry.route.path, entry);
  }

  /** Serves the request here or hands it to `router` (Fastify's handler). */
  route(request: IncomingMessage, response: ServerResponse, router: () => void): void {
    const options = this.#options;
    const entry = options === undefined ? undefined : this.#takes(options, request);
    if (options === undefined || entry === undefined) {
      router();
      return;
    }
    const key = apiKeyOf(request);
    if (key === undefined) {
      router();
      return;
    }
    options.keys.subjectOf(key).then(
      (subject) => {
        // A client gone while its key was looked up needs no answer (and holds no work).
        if (request.destroyed) return;
        // The router answers (and counts) unknown keys and keys over their rate.
        if (subject === undefined || options.closing()) return router();
        if (options.limiter !== undefined) {
          if (options.limiter.waitSeconds(key) > 0) return router();
          options.limiter.take(key);
        }
        this.#serve(options, entry, request, response, subject);
      },
      () => router(),
    );
  }

  /** The route of a request this path takes, or undefined for the router. */
  #takes(
    options: PassThroughFrontOptions,
    request: IncomingMessage,
  ): PassThroughRouteServing | undefined {
    if (request.method !== "POST" || options.closing()) return undefined;
    const url = request.url ?? "";
    const query = url.indexOf("?");
    const entry = this.#routes.get(query < 0 ? url : url.slice(0, query));
    if (entry === undefined) return undefined;
    const { headers } = request;
    // A body of a length within the limit, or chunked (its size is checked as it is read).
    const length = headers["content-length"];
    if (length !== undefined) {
      if (!/^\d+$/.test(length) || Number(length) === 0 || Number(length) > options.bodyLimit) {
        return undefined;
      }
    } else if (headers["transfer-encoding"] === undefined) {
      return undefined;
    }
    const type = headers["content-type"];
    if (type === undefined || mediaType(type) !== "application/json") return undefined;
    if (declaredEncodingProblem(request) !== undefined) return undefined;
    if ((options.failures?.waitSeconds(request.socket.remoteAddress ?? "") ?? 0) > 0) {
      return undefined;
    }
    return entry;
  }

  #serve(
    options: PassThroughFrontOptions,
    entry: PassThroughRouteServing,
    request: IncomingMessage,
    response: ServerResponse,
    subjectUid: string,
  ): void {
    const started = performance.now();
    this.#served++;
    const id = options.requestId(request);
    let logger: FastifyBaseLogger | undefined;
    const log = (): FastifyBaseLogger => (logger ??= options.log.child({ request_id: id }));
    const logsRequests = levelEnabled(options.log, "info");
    if (logsRequests) {
      log().info(
        {
          req: {
            method: request.method,
            url: request.url,
            host: request.headers.host,
            remoteAddress: request.socket.remoteAddress,
            remotePort: request.socket.remotePort,
          },
        },
        "incoming request",
      );
    }
    if (logsRequests) {
      response.once("close", () =>
        log().info(
          {
            res: { statusCode: response.statusCode },
            responseTime: performance.now() - started,
          },
          "request completed",
        ),
      );
    }
    // A response that ends while the server closes ends its connection too: close waits for
    // connections, and a kept-alive one would hold it until its idle timeout.
    response.once("finish", () => {
      if (options.closing()) request.socket.end();
    });
    // Counted until the engine (with the call's placing) or the refusal is done.
    options.work.start();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      options.work.end();
    };
    const exchange: PassThroughExchange = {
      id,
      url: request.url ?? "",
      headers: request.headers,
      subjectUid,
      get log() {
        return log();
      },
      response,
      hijack: () => undefined,
    };
    const fail = (error: unknown) => {
      sendResponseError(response, id, toVerbatimError(error), log());
    };
    const chunks: Buffer[] = [];
    let received = 0;
    request.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received > options.bodyLimit) {
        if (chunks.length > 0) chunks.length = 0;
        request.removeAllListeners("data");
        request.removeAllListeners("end");
        response.setHeader("connection", "close");
        fail(
          new VerbatimError("payload_too_large", "the request body is larger than the limit", {
            hint: "Send a smaller body",
          }),
        );
        response.once("finish", () => request.destroy());
        end();
        return;
      }
      chunks.push(chunk);
    });
    // A client gone before its body ended: nothing was sent upstream.
    request.on("close", () => {
      if (!request.complete) end();
    });
    request.on("end", () => {
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      parseJsonBodyText(bytes)
        .then(({ text, value }) =>
          passThroughCall(entry.route, entry.config, exchange.url, { bytes, text, value }),
        )
        .then(
          (call) => forward(call),
          (error: unknown) => {
            fail(error);
            end();
          },
        );
    });
    const forward = (call: ReturnType<typeof passThroughCall>): void => {
      passThrough(exchange, entry.recorder, call)
        .catch((error: unknown) => {
          if (!response.headersSent) fail(error);
          else {
            log().error({ err: error }, "the pass-through failed after its answer began");
            response.destroy();
          }
        })
        .finally(end);
    };
  }
}

function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(";");
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

function levelEnabled(log: FastifyBaseLogger, level: string): boolean {
  const check = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined ? true : check.call(log, level);
}
