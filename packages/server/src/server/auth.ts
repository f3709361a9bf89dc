import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import type { ApiKeyLookup } from "../gateway/keys/api-key-cache.js";
import { sendError } from "./errors.js";
import type { FailedAuthenticationLimit } from "./failed-authentication.js";
import { queryKeyOf } from "./query-key.js";
import type { RequestLimiter } from "../gateway/limits/shared-limits.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The subject an API key acts for (routes under API-key auth); "" elsewhere. */
    subjectUid: string;
  }
}

/** The bearer credential of a request, or undefined. */
export function bearerOf(request: Pick<FastifyRequest, "headers">): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** A key header's credential (`x-api-key` of Anthropic clients, `x-goog-api-key` of Gemini's). */
function keyHeaderOf(
  request: Pick<FastifyRequest, "headers">,
  name: "x-api-key" | "x-goog-api-key",
): string | undefined {
  const header = request.headers[name];
  return typeof header === "string" && header.trim() !== "" ? header.trim() : undefined;
}

/**
 * The API key a caller request presents: a bearer token, else `x-api-key`, else
 * `x-goog-api-key`, else (a Gemini route) the query's `key` (query-key.ts).
 */
export function apiKeyOf(
  request: Pick<FastifyRequest, "headers"> & { readonly raw?: IncomingMessage },
): string | undefined {
  return (
    bearerOf(request) ??
    keyHeaderOf(request, "x-api-key") ??
    keyHeaderOf(request, "x-goog-api-key") ??
    (request.raw === undefined ? undefined : queryKeyOf(request.raw))
  );
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
        : "Send Authorization: Bearer <API key> (or x-api-key, or for Gemini routes x-goog-api-key or ?key=; create one with verbatim keys create --db <db> --subject <subject_uid>)",
  });
}

function tooManyFailures(retryAfter: number): VerbatimError {
  return new VerbatimError(
    "authentication_rate_limited",
    "too many failed authentications from this address",
    {
      where: "client address",
      hint: `Retry after ${retryAfter} s with a valid credential`,
      details: { retry_after_seconds: retryAfter },
    },
  );
}

/**
 * Refuses a request from an address over the failed-authentication limit (true: answered).
 * Checked before the credential is: a blocked address learns nothing about any credential.
 */
async function refusedForFailures(
  request: FastifyRequest,
  reply: FastifyReply,
  failures: FailedAuthenticationLimit | undefined,
): Promise<boolean> {
  const retryAfter = (await failures?.waitSeconds(request.ip)) ?? 0;
  if (retryAfter === 0) return false;
  reply.header("retry-after", String(retryAfter));
  await sendError(request, reply, tooManyFailures(retryAfter));
  return true;
}

/** onRequest hook of the console routes: the operator token, compared in constant time. */
export function operatorAuth(operatorToken: string, failures?: FailedAuthenticationLimit) {
  const expected = digest(operatorToken);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (await refusedForFailures(request, reply, failures)) return;
    const given = bearerOf(request);
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      if (given !== undefined) await failures?.recordFailure(request.ip);
      await sendError(request, reply, unauthorized("operator token"));
    }
  };
}

/**
 * onRequest hook of the caller routes: the API key names the subject every read and write is
 * scoped to; then the key's rate limit. Unknown or revoked keys count as failed authentications
 * of the client's address.
 */
export function apiKeyAuth(
  keys: ApiKeyLookup,
  limiter: RequestLimiter | undefined,
  failures?: FailedAuthenticationLimit,
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (await refusedForFailures(request, reply, failures)) return;
    const given = apiKeyOf(request);
    const subject = given === undefined ? undefined : await keys.subjectOf(given);
    if (given === undefined || subject === undefined) {
      if (given !== undefined) await failures?.recordFailure(request.ip);
      await sendError(request, reply, unauthorized("API key"));
      return;
    }
    if (limiter !== undefined) {
      const retryAfter = await limiter.take(given);
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
