import type { FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import { sendError } from "./errors.js";

/**
 * Every route takes its request target as a path (origin-form, RFC 9112 3.2.1). Another form
 * (`POST http://host/v1/messages`, absolute-form, meant for proxies) is refused with 400 before
 * anything else reads it: routed on, its origin ended up inside the upstream URL of a
 * pass-through call.
 */
export function requestTargetProblem(url: string): VerbatimError | undefined {
  if (url.startsWith("/")) return undefined;
  const shown = url.length > 80 ? `${url.slice(0, 80)}…` : url;
  return new VerbatimError(
    "invalid_request",
    `the request target "${shown}" is not a path: this server is not a proxy and takes no absolute-form (scheme://host/…) or other targets`,
    {
      where: "request target",
      hint: "Send the path alone on the request line (POST /v1/messages) and the host in the Host header",
    },
  );
}

/** The onRequest hook that refuses a request whose target is not a path. */
export async function refuseOtherRequestTargets(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const problem = requestTargetProblem(request.raw.url ?? "");
  if (problem !== undefined) await sendError(request, reply, problem);
}
