import type { FastifySchemaCompiler } from "fastify";
import { z, type ZodType } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import {
  STORED_TEXT_HINT,
  describeStoredTextFault,
  findStoredTextFault,
  storedTextFaultWhere,
} from "verbatim-llm/internal";

/**
 * Routes declare zod schemas in Fastify's `schema` option. This file makes Fastify validate
 * with them and lets @fastify/swagger turn them into JSON Schema for docs/openapi.json, so one
 * declaration is both the check and the documentation.
 */

/** The error a failed validation carries to the error handler. */
export class RequestValidationError extends Error {
  readonly verbatim: VerbatimError;
  constructor(verbatim: VerbatimError) {
    super(verbatim.message);
    this.verbatim = verbatim;
  }
}

function isZodType(value: unknown): value is ZodType {
  return typeof value === "object" && value !== null && "safeParse" in value;
}

function describeIssuePath(part: string, path: readonly PropertyKey[]): string {
  let where = part;
  for (const key of path) {
    where += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
  }
  return where;
}

interface PlainIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The most specific problem of an issue: for a value that matches no branch of a union, the
 * problem of the branch it got furthest into, with the full path.
 */
function specificIssue(issue: z.core.$ZodIssue, base: readonly PropertyKey[] = []): PlainIssue {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // The branch the value got furthest into (the deepest problem), then the fewest problems.
    let best: { issue: PlainIssue; count: number } | undefined;
    for (const branch of issue.errors) {
      const first = branch[0];
      if (first === undefined) continue;
      const candidate = { issue: specificIssue(first, path), count: branch.length };
      if (
        best === undefined ||
        candidate.issue.path.length > best.issue.path.length ||
        (candidate.issue.path.length === best.issue.path.length && candidate.count < best.count)
      ) {
        best = candidate;
      }
    }
    if (best !== undefined) return best.issue;
  }
  return { path, message: issue.message };
}

/** Top-level fields that name a stored thing (`id`, `…_id`, `anchor`): lookups, not writes. */
function namesAnId(field: string): boolean {
  return field === "id" || field.endsWith("_id") || field === "anchor";
}

/**
 * The body without its top-level string id fields: an id names a record, it is not written,
 * and one of another shape is answered 404 like a missing id by the id-shape check
 * (src/server/id-shape.ts), not 400 here.
 */
function withoutIdFields(data: unknown): unknown {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return data;
  const entries = Object.entries(data).filter(
    ([field, value]) => !(namesAnId(field) && typeof value === "string"),
  );
  if (entries.length === Object.keys(data).length) return data;
  const copy: Record<string, unknown> = {};
  for (const [field, value] of entries)
    Object.defineProperty(copy, field, { value, enumerable: true });
  return copy;
}

/**
 * A body string that breaks the stored-text rule (src/core/stored-text.ts), as the error its
 * route answers: checked on the body as parsed, before the schema (which could drop a
 * `__proto__` key) and before the handler (so before any read, write or upstream call).
 */
function storedTextRefusal(data: unknown): RequestValidationError | undefined {
  const fault = findStoredTextFault(withoutIdFields(data));
  if (fault === undefined) return undefined;
  return new RequestValidationError(
    new VerbatimError("invalid_request", describeStoredTextFault(fault), {
      where: storedTextFaultWhere("body", fault),
      hint: STORED_TEXT_HINT,
    }),
  );
}

export const zodValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (!isZodType(schema)) throw new Error("route schemas must be zod schemas");
  const part = httpPart ?? "body";
  return (data: unknown) => {
    if (part === "body") {
      const refusal = storedTextRefusal(data);
      if (refusal !== undefined) return { error: refusal };
    }
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const first = result.error.issues[0];
    const issue = first === undefined ? undefined : specificIssue(first);
    const where = describeIssuePath(part, issue?.path ?? []);
    const more =
      result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : "";
    const error = new VerbatimError("invalid_request", `${issue?.message ?? "invalid"}${more}`, {
      where,
      hint: "Fix the request as the route's schema in docs/openapi.json describes; nothing was written",
      details: {
        issues: result.error.issues.slice(0, 20).map((one) => {
          const specific = specificIssue(one);
          return { where: describeIssuePath(part, specific.path), message: specific.message };
        }),
      },
    });
    return { error: new RequestValidationError(error) };
  };
};

/** JSON Schema of a zod schema, as OpenAPI 3.1 (JSON Schema 2020-12) embeds it. */
export function jsonSchemaOf(schema: ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete json["$schema"];
  return json;
}

/** Zod schemas documented once under components.schemas and referenced by `$ref`. */
const sharedSchemas = new Map<ZodType, string>();

export function shareSchema<T extends ZodType>(name: string, schema: T): T {
  sharedSchemas.set(schema, name);
  return schema;
}

/** The components.schemas entries of the shared schemas. */
export function sharedComponentSchemas(): Record<string, Record<string, unknown>> {
  const components: Record<string, Record<string, unknown>> = {};
  for (const [schema, name] of sharedSchemas) components[name] = jsonSchemaOf(schema, "output");
  return components;
}

/** @fastify/swagger `transform`: zod schemas in, JSON Schema out. */
export function swaggerTransform({
  schema,
  url,
}: {
  schema: Record<string, unknown> | undefined;
  url: string;
}): { schema: Record<string, unknown>; url: string } {
  if (schema === undefined) return { schema: {}, url };
  const transformed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "response" && typeof value === "object" && value !== null) {
      const responses: Record<string, unknown> = {};
      for (const [status, reply] of Object.entries(value)) {
        const shared = isZodType(reply) ? sharedSchemas.get(reply) : undefined;
        responses[status] =
          shared !== undefined
            ? { $ref: `#/components/schemas/${shared}` }
            : isZodType(reply)
              ? jsonSchemaOf(reply, "output")
              : reply;
      }
      transformed[key] = responses;
    } else {
      transformed[key] = isZodType(value) ? jsonSchemaOf(value, "input") : value;
    }
  }
  return { schema: transformed, url };
}
