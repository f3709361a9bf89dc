import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError, httpStatusOf } from "verbatim-llm/core";
import { errorReply, rawErrorResponse, sendError } from "./errors.js";

/**
 * The replies no route sends: what Node's HTTP parser refuses (a broken request, headers over
 * its limit, a header or body timeout), what Fastify's router refuses before any route runs (a
 * bad percent-encoding, an overlong path segment) and an `Expect` header the server cannot
 * meet. Each gets the one error shape (docs/errors.md) instead of Node's or Fastify's own.
 */

/** The VerbatimError for an error of Node's HTTP parser (`clientError`). */
export function clientErrorOf(error: NodeJS.ErrnoException): VerbatimError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new VerbatimError(
        "request_timeout",
        "the request did not arrive in time: its headers or its body were too slow",
        {
          hint: "Send the whole request at once; the timeouts are in docs/server/README.md (Timeouts). Nothing was written",
        },
      );
    case "HPE_HEADER_OVERFLOW":
      return new VerbatimError("request_headers_too_large", "the request's headers are too large", {
        where: "headers",
        hint: "Send at most 16 KiB of headers",
      });
    default:
      return new VerbatimError(
        "malformed_request",
        `the request is not HTTP/1.1 the server can read (${error.code ?? "parse error"})`,
        { hint: "Send a well-formed HTTP/1.1 request" },
      );
  }
}

/** Fastify's `clientErrorHandler`: the reply in the error shape, then the socket is closed. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  // Nothing was read on a socket that is closed before sending anything: no reply is owed; and
  // a reply already under way on the socket is not interrupted by a second one (as Node does).
  const underWay = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && socket.bytesRead > 0 && underWay?.headersSent !== true) {
    socket.end(rawErrorResponse(clientErrorOf(error), randomUUID()));
    socket.destroySoon();
    return;
  }
  socket.destroy();
}

/**
 * Fastify's `frameworkErrors`: a path or query that is not valid percent-encoded UTF-8, or a path
 * segment longer than the router reads.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.header("x-request-id", request.id);
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    void sendError(
      request,
      reply,
      new VerbatimError("url_too_long", "a segment of the path is longer than 1024 characters", {
        where: "path",
        hint: "Check the URL; ids are at most 200 characters",
      }),
    );
    return;
  }
  void sendError(
    request,
    reply,
    new VerbatimError(
      "invalid_url",
      "the URL has a bad percent-encoding (a % not followed by two hex digits, or bytes that are not UTF-8)",
      { where: "path", hint: "Percent-encode the path and query as UTF-8 (encodeURIComponent)" },
    ),
  );
}

/** The server's `checkExpectation` listener: only `Expect: 100-continue` is met (Node's part). */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  const error = new VerbatimError(
    "expectation_failed",
    `the server cannot meet Expect: ${String(request.headers.expect).slice(0, 100)}`,
    { where: "Expect header", hint: "Remove the Expect header, or send Expect: 100-continue" },
  );
  const requestId = randomUUID();
  const body = JSON.stringify(errorReply(error, requestId));
  response.writeHead(httpStatusOf(error.code), {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId,
    connection: "close",
  });
  response.end(body);
}
