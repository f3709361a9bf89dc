import type { ProviderId } from "verbatim-llm/providers";
import { CREDENTIAL_HEADERS } from "../../gateway/recording/calls.js";

/**
 * Which headers a pass-through call carries each way (docs/server/recorded-calls.md, "Recorded calls"): the
 * client's go upstream without its credentials (the operator's provider key takes their place)
 * and without the ones that pick the operator's organisation or project unless the operator
 * allows it; the upstream's come back without the ones about the operator's account.
 */

/** Headers that belong to one connection and are never forwarded. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-connection",
]);

/** A caller's choice of which of the operator's organisations or projects is billed. */
const ORGANIZATION_CHOICE = new Set(["openai-organization", "openai-project"]);

/** The upstream's headers about the operator's account: neither shown to callers nor stored. */
const ACCOUNT_HEADERS = new Set([
  "set-cookie",
  "openai-organization",
  "openai-project",
  "anthropic-organization-id",
]);

/** The client's headers as sent upstream, with the provider's key. */
export function forwardedHeaders(
  requestHeaders: Readonly<Record<string, string>>,
  target: { readonly provider: ProviderId; readonly upstream: { readonly apiKey: string } },
  forwardOrganization: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(requestHeaders)) {
    if (HOP_BY_HOP.has(name) || CREDENTIAL_HEADERS.has(name) || name === "x-request-id") continue;
    if (!forwardOrganization && ORGANIZATION_CHOICE.has(name)) continue;
    out[name] = value;
  }
  if (target.provider === "anthropic") out["x-api-key"] = target.upstream.apiKey;
  else if (target.provider === "gemini") out["x-goog-api-key"] = target.upstream.apiKey;
  else out["authorization"] = `Bearer ${target.upstream.apiKey}`;
  return out;
}

/** The upstream's headers without those about the operator's account (as stored). */
export function withoutAccountHeaders(
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!ACCOUNT_HEADERS.has(name)) out[name] = value;
  }
  return out;
}

/** The headers the client gets: the request id, then the upstream's for this connection. */
export function clientHeaders(
  headers: Readonly<Record<string, string>>,
  requestId: string,
): Record<string, string> {
  const out: Record<string, string> = { "x-request-id": requestId };
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && !ACCOUNT_HEADERS.has(name)) out[name] = value;
  }
  return out;
}
