import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "../core/errors.js";
import type { ApiKeyLookup } from "./api-key-cache.js";
import { sendError } from "./errors.js";
import type { RateLimiter } from "./rate-limit.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The subject an API key acts for (routes under API-key auth); "" elsewhere. */
    subjectUid: string;
  }
}

/** The bearer credential of a request, or undefined. */
export function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function unauthorized(what: string): VerbatimError {
  return new VerbatimError("unauthorized", `missing or invalid ${what}`, {
    where: "Authorization header",
    hint:
      what === "operator token"
        ? "Send Authorization: Bearer <operator token> (printed by verbatim serve, or VERBATIM_OPERATOR_TOKEN)"
        : "Send Authorization: Bearer <API key> (create one with verbatim keys create --db <db> --subject <subject_uid>)",
  });
}

/** onRequest hook of the console routes: the operator token, compared in constant time. */
export function operatorAuth(operatorToken: string) {
  const expected = digest(operatorToken);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const given = bearerOf(request);
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      await sendError(request, reply, unauthorized("operator token"));
    }
  };
}

/**
 * onRequest hook of the caller routes: the API key names the subject every read and write is
 * scoped to; then the key's rate limit.
 */
export function apiKeyAuth(keys: ApiKeyLookup, limiter: RateLimiter | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const given = bearerOf(request);
    const subject = given === undefined ? undefined : await keys.subjectOf(given);
    if (given === undefined || subject === undefined) {
      await sendError(request, reply, unauthorized("API key"));
      return;
    }
    if (limiter !== undefined) {
      const retryAfter = limiter.take(given);
      if (retryAfter > 0) {
        reply.header("retry-after", String(retryAfter));
        await sendError(
          request,
          reply,
          new VerbatimError("rate_limited", "this API key sent too many requests", {
            hint: `Retry after ${retryAfter} s`,
            details: { retry_after_seconds: retryAfter },
          }),
        );
        return;
      }
    }
    request.subjectUid = subject;
  };
}
