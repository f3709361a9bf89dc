import { STATUS_CODES, type ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { httpStatusOf, isVerbatimError, VerbatimError } from "verbatim-llm/core";
import { RequestValidationError, shareSchema } from "./zod-schemas.js";
// Every code a reply may carry: each layer's module registers its codes' statuses (the
// gateway's module registers the store's too).
import "../gateway/error-codes.js";
import "./error-codes.js";

/**
 * One error shape for every route (docs/errors.md): `{"error": {"code", "message", "where",
 * "hint", "request_id"}}` with the status the code maps to (httpStatusOf).
 */
export const errorReplySchema = shareSchema(
  "Error",
  z
    .object({
      error: z.object({
        code: z.string().describe("Stable error code (docs/errors.md)."),
        message: z.string().describe("What went wrong."),
        type: z
          .string()
          .describe(
            "OpenAI's error type: invalid_request_error, authentication_error, rate_limit_error or server_error.",
          ),
        param: z
          .string()
          .nullable()
          .describe("OpenAI's param: the body field concerned (where without body.), or null."),
        where: z.string().optional().describe("The field, path or id concerned."),
        hint: z.string().optional().describe("What to do about it."),
        details: z.record(z.string(), z.unknown()).optional(),
        request_id: z.string().describe("The request id, also in the x-request-id header."),
      }),
    })
    .describe("Every error, on every route."),
);

export type ErrorReply = z.infer<typeof errorReplySchema>;

function fromFastifyError(error: FastifyError): VerbatimError {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new VerbatimError("payload_too_large", "the request body is larger than the limit", {
        hint: "Send a smaller body",
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new VerbatimError(
        "unsupported_media_type",
        "the body is not application/json (the Content-Type header is missing or names another type)",
        { where: "Content-Type header", hint: "Send JSON with Content-Type: application/json" },
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new VerbatimError("invalid_request", error.message, { where: "body" });
    default:
      break;
  }
  if (error.statusCode === 413) {
    return new VerbatimError("payload_too_large", error.message);
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new VerbatimError("invalid_request", error.message);
  }
  return new VerbatimError("internal_error", "internal error", { cause: error });
}

/** Any thrown value → the VerbatimError the client sees. */
export function toVerbatimError(error: unknown): VerbatimError {
  if (error instanceof RequestValidationError) return error.verbatim;
  if (isVerbatimError(error)) return error;
  if (typeof error === "object" && error !== null && "code" in error) {
    return fromFastifyError(error as FastifyError);
  }
  return new VerbatimError("internal_error", "internal error", { cause: error });
}

export function errorReply(error: VerbatimError, requestId: string): ErrorReply {
  const status = httpStatusOf(error.code);
  const body: ErrorReply["error"] = {
    code: error.code,
    message: error.message,
    type:
      status === 401
        ? "authentication_error"
        : status === 429
          ? "rate_limit_error"
          : status >= 500
            ? "server_error"
            : "invalid_request_error",
    param: error.where?.startsWith("body.") === true ? error.where.slice("body.".length) : null,
    request_id: requestId,
  };
  if (error.where !== undefined) body.where = error.where;
  if (error.hint !== undefined) body.hint = error.hint;
  if (error.details !== undefined) body.details = { ...error.details };
  return { error: body };
}

/**
 * A whole HTTP/1.1 error response in the one error shape, for replies written on the socket
 * itself (requests Node's parser refused, timeouts), where no Fastify reply exists.
 */
export function rawErrorResponse(error: VerbatimError, requestId: string): string {
  const status = httpStatusOf(error.code);
  const body = JSON.stringify(errorReply(error, requestId));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
    `Content-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

/** Logs an error answered to a client: a server failure as an error, a refusal as info. */
function logAnswered(log: FastifyBaseLogger, error: VerbatimError, status: number): void {
  if (status >= 500) log.error({ err: error.cause ?? error, code: error.code }, error.message);
  else log.info({ code: error.code, where: error.where }, error.message);
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: VerbatimError,
): FastifyReply {
  const status = httpStatusOf(error.code);
  logAnswered(request.log, error, status);
  return reply.code(status).type("application/json").send(errorReply(error, request.id));
}

/** Fastify's error handler: every failure becomes the one error shape. */
export function handleError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  return sendError(request, reply, toVerbatimError(error));
}
