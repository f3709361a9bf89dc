import { isIP } from "node:net";
import { VerbatimError } from "verbatim-llm/core";
import type { RequestLimiter } from "../gateway/limits/shared-limits.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limit.js";

/**
 * The limit on failed authentications per client address (docs/server/README.md, "Failed
 * authentications"): each unknown, revoked or wrong credential takes a token from the address's
 * bucket; an address with none left gets 429 `authentication_rate_limited` for every request that
 * needs a credential, a valid one included (else guessing could go on), until a token is back.
 * Other addresses, and requests without a credential, are not counted.
 */
export const DEFAULT_FAILED_AUTHENTICATION_LIMIT: RateLimitOptions = { perMinute: 20, burst: 20 };

/**
 * The address a client is limited by: an IPv4 address as is; an IPv6 address by its /64 prefix
 * (one host usually owns a whole /64, and could otherwise change address at every guess).
 */
export function clientAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::")
    ? [
        ...headGroups,
        ...Array<string>(8 - headGroups.length - tailGroups.length).fill("0"),
        ...tailGroups,
      ]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

export class FailedAuthenticationLimit {
  readonly #buckets: RequestLimiter;

  /** `buckets`: limits in process, or shared by the servers of a database (`SharedLimits`). */
  constructor(options: RateLimitOptions | RequestLimiter, now?: () => number) {
    this.#buckets = "take" in options ? options : new RateLimiter(options, now);
  }

  /** Seconds until the address may try a credential again; 0 when it may now. */
  async waitSeconds(address: string): Promise<number> {
    return this.#buckets.waitSeconds(clientAddressKey(address));
  }

  async recordFailure(address: string): Promise<void> {
    await this.#buckets.take(clientAddressKey(address));
  }
}

const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/**
 * VERBATIM_TRUST_PROXY: the reverse proxies whose `X-Forwarded-For` names the client (a comma
 * list of addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`); undefined when
 * unset. Without it the client is the connection's peer.
 */
export function trustedProxiesFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
): readonly string[] | undefined {
  const name = "VERBATIM_TRUST_PROXY";
  const text = env?.[name];
  if (text === undefined || text.trim() === "") return undefined;
  const entries = text.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const width = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= width);
    if (PROXY_NAMES.has(entry) || (width > 0 && prefixOk && extra === undefined)) continue;
    throw new VerbatimError(
      "invalid_argument",
      `${name} must list proxy addresses, not "${entry}"`,
      {
        where: name,
        hint: `Set ${name} to a comma list of addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1), or loopback, linklocal, uniquelocal; or unset it (docs/server/README.md)`,
      },
    );
  }
  return entries;
}
