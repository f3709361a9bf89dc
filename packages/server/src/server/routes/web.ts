import { readFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { VerbatimError } from "verbatim-llm/core";
import { missingPageHtml } from "../console-page.js";
import { MISSING_PAGE_HEADERS, PAGE_HEADERS } from "../console/reply-headers.js";

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

function notFound(path: string): VerbatimError {
  return new VerbatimError("route_not_found", `no file ${path}`, {
    hint: "The console page is at /",
  });
}

/** The console page's own addresses (docs/console.md, "Addresses"). */
export const PAGE_PATHS = ["/", "/conversations", "/conversations/*", "/jobs", "/jobs/*"];

/**
 * No console page to serve (not built, and not buildable here): its addresses answer with a
 * page saying so and how to build it, rather than a bare 404.
 */
export function registerMissingPageRoutes(
  app: FastifyInstance,
  page: { readonly missing: string },
): void {
  const html = missingPageHtml(page.missing);
  for (const path of PAGE_PATHS) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .code(503)
        .headers(MISSING_PAGE_HEADERS)
        .type(CONTENT_TYPES[".html"] ?? "text/html")
        .send(html),
    );
  }
}

/**
 * The console page (web/, built into dist/web): `/` and the page's addresses (`/conversations…`,
 * `/jobs…`) are its index.html, `/assets/*` its files.
 * The page itself asks for the operator token and talks to the console routes over HTTP.
 */
export function registerWebRoutes(app: FastifyInstance, webRoot: string): void {
  const root = resolve(webRoot);
  const cache = new Map<string, Buffer>();
  const load = async (relative: string): Promise<Buffer> => {
    const full = resolve(join(root, relative));
    if (!full.startsWith(root + sep)) throw notFound(relative);
    const cached = cache.get(full);
    if (cached !== undefined) return cached;
    try {
      const bytes = await readFile(full);
      cache.set(full, bytes);
      return bytes;
    } catch {
      throw notFound(relative);
    }
  };
  const typeOf = (path: string): string => {
    const dot = path.lastIndexOf(".");
    return CONTENT_TYPES[dot < 0 ? "" : path.slice(dot)] ?? "application/octet-stream";
  };
  // The page's own addresses (docs/console.md, "Addresses"): each answers with the page,
  // which opens what the address names.
  const page = async (_request: unknown, reply: FastifyReply) =>
    reply
      .headers(PAGE_HEADERS)
      .type(CONTENT_TYPES[".html"] ?? "text/html")
      .send(await load("index.html"));
  for (const path of PAGE_PATHS) app.get(path, { schema: { hide: true } }, page);
  app.get<{ Params: { "*": string } }>(
    "/assets/*",
    { schema: { hide: true } },
    async (request, reply) => {
      const path = `assets/${request.params["*"]}`;
      return reply
        .headers(PAGE_HEADERS)
        .type(typeOf(path))
        .header("cache-control", "public, max-age=31536000, immutable")
        .send(await load(path));
    },
  );
}
