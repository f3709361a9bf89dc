/**
 * Which image URLs the server fetches (docs/server/responses.md, "Images"), from VERBATIM_IMAGE_URLS and
 * VERBATIM_IMAGE_URL_HOSTS, read when `serve` starts (a typo stops it):
 * - `public` (the default): only hosts whose every address is a public unicast address, and the
 *   hosts of the allow-list whatever their addresses;
 * - `off`: none (an image comes as a data URL);
 * - `any`: every host, internal ones included (a server that only trusted callers reach).
 */
export type ImageUrlMode = "public" | "off" | "any";

export const IMAGE_URL_MODES: readonly ImageUrlMode[] = ["public", "off", "any"];

/** An allow-list entry: a host name or IP address as the URL parser writes it, and a port. */
export interface AllowedHost {
  /** Lower case; an IPv6 address in brackets, an IPv4 address dotted (`127.0.0.1`). */
  readonly hostname: string;
  /** Undefined: every port of the host. */
  readonly port?: number;
}

export interface ImageUrlPolicy {
  readonly mode: ImageUrlMode;
  /** Hosts fetched in the `public` mode whatever their addresses (internal services). */
  readonly allowedHosts: readonly AllowedHost[];
}

export const DEFAULT_IMAGE_URL_POLICY: ImageUrlPolicy = { mode: "public", allowedHosts: [] };

/** Whether the allow-list names the host and port of `url` (an http or https URL). */
export function isAllowedHost(policy: ImageUrlPolicy, url: URL): boolean {
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return policy.allowedHosts.some(
    (entry) => entry.hostname === url.hostname && (entry.port === undefined || entry.port === port),
  );
}
