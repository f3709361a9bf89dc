import type { FastifyReply } from "fastify";

/**
 * The console page's policy (docs/console.md, "Headers"): its own script, style and fetches
 * only (the built page has no inline script or style), images from its own `data:` and `blob:`
 * URLs (stored images are fetched with the token and shown from a blob), no plugins, no
 * `<base>`, forms posting nowhere else, and no framing by any other page.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The page and its files: the policy above, no Referer to anywhere, no type sniffing. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PAGE_CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** The page saying the console is not built: no script at all, its one inline style kept. */
export const MISSING_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...PAGE_HEADERS,
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/**
 * Every console route's answer (JSON, image bytes, errors): stored content read under the
 * operator token is never kept by a browser or proxy cache, and never sniffed as another type.
 */
export const CONSOLE_ROUTE_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/** An onRequest hook of the console's scope, ahead of the token check so refusals carry them. */
export async function consoleRouteHeaders(_request: unknown, reply: FastifyReply): Promise<void> {
  reply.headers(CONSOLE_ROUTE_HEADERS);
}
