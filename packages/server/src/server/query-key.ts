import type { IncomingMessage } from "node:http";

/**
 * The API key a Gemini client sends in the query (`?key=…`, as Google's API takes it;
 * docs/server/recorded-calls.md, "Gemini"). Fastify's `rewriteUrl` takes it out of every
 * `/v1beta/` URL before routing, so no route, log line, upstream URL or recorded path ever holds
 * it; auth.ts reads it from here. The rest of the query keeps its bytes and order.
 */

const QUERY_KEYS = new WeakMap<IncomingMessage, string>();

const PREFIX = "/v1beta/";

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/** The URL without its `key` parameters (rewriteUrl); the last one is kept for auth. */
export function takeQueryKey(request: IncomingMessage): string {
  const url = request.url ?? "/";
  const question = url.indexOf("?");
  if (!url.startsWith(PREFIX) || question < 0 || !url.includes("key", question)) return url;
  const kept: string[] = [];
  let key: string | undefined;
  for (const parameter of url.slice(question + 1).split("&")) {
    const equals = parameter.indexOf("=");
    const name = decoded(equals < 0 ? parameter : parameter.slice(0, equals));
    if (name === "key") key = decoded(equals < 0 ? "" : parameter.slice(equals + 1)) ?? "";
    else kept.push(parameter);
  }
  if (key === undefined) return url;
  if (key.trim() !== "") QUERY_KEYS.set(request, key.trim());
  const rewritten =
    kept.length === 0 ? url.slice(0, question) : `${url.slice(0, question + 1)}${kept.join("&")}`;
  // Fastify keeps the URL as sent as `originalUrl`: it holds the key too.
  (request as IncomingMessage & { originalUrl?: string }).originalUrl = rewritten;
  return rewritten;
}

/** The key `takeQueryKey` took out of the request's URL, or undefined. */
export function queryKeyOf(request: IncomingMessage): string | undefined {
  return QUERY_KEYS.get(request);
}
