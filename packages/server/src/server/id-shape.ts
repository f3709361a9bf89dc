import type { FastifyReply, FastifyRequest } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import { sendError } from "./errors.js";

/**
 * The shape of every id the server hands out (`msg_…`, `conv_…`, `job_…`, `turn_…`, …): 1 to 200
 * characters of `A–Z a–z 0–9 . _ : -`. An id of any other shape names nothing, so it is answered
 * 404 before any query runs: a NUL, a control character or a lone surrogate never reaches a
 * database (PostgreSQL refuses NUL in text and would fail the request with 500).
 */
export const ID_SHAPE = /^[A-Za-z0-9._:-]{1,200}$/;

/** Body and query fields that name a stored thing: `id`, `…_id`, `anchor`. */
function namesAnId(field: string): boolean {
  return field === "id" || field.endsWith("_id") || field === "anchor";
}

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

function notFound(where: string, value: string): VerbatimError {
  return new VerbatimError("resource_not_found", `nothing has the id ${shown(value)}`, {
    where,
    hint: "Ids are 1 to 200 characters of A-Z a-z 0-9 . _ : - (as the server gives them out); check the id",
  });
}

function badField(
  part: "path" | "query" | "body",
  values: unknown,
  isIdField: (field: string) => boolean,
): VerbatimError | undefined {
  if (typeof values !== "object" || values === null || Array.isArray(values)) return undefined;
  for (const [field, value] of Object.entries(values)) {
    if (!isIdField(field) || typeof value !== "string") continue;
    if (!ID_SHAPE.test(value)) return notFound(`${part}.${field}`, value);
  }
  return undefined;
}

/**
 * preValidation hook: every path parameter must have the id shape, else 404 (before the body is
 * validated: an id that names nothing is not found, whatever the body).
 */
export async function checkPathIds(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const error = badField("path", request.params, (field) => field !== "*");
  if (error !== undefined) await sendError(request, reply, error);
}

/**
 * preHandler hook (after the route's schema accepted the request): every top-level body or
 * query field that names an id must have the id shape, else 404.
 */
export async function checkFieldIds(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const error =
    badField("query", request.query, namesAnId) ?? badField("body", request.body, namesAnId);
  if (error !== undefined) await sendError(request, reply, error);
}
