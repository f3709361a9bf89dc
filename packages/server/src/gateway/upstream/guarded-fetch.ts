import { lookup as lookupHost, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { isAllowedHost, type ImageUrlPolicy } from "./image-url-policy.js";
import { nonPublicAddressKind } from "./public-address.js";

/**
 * GET of a URL a caller gave (an image URL), guarded for a server many tenants share
 * (docs/server/responses.md, "Images"):
 * - in the `public` mode every address a host name resolves to must be public, and the
 *   connection goes to the checked addresses (the check is the connection's own DNS lookup, so
 *   no second answer can slip in between); an IP literal, in any notation the URL parser
 *   normalises (`2130706433`, `0x7f.1`, `[::ffff:7f00:1]`), is checked as written;
 * - redirects are followed by hand, at most `maxRedirects`, each hop checked again, http(s) only;
 * - the body is read as a stream and abandoned as soon as it passes `maxBytes` (a declared
 *   length over it is refused before any byte is read; nothing is allocated from a header);
 * - a refusal says why in words of its own: nothing the refused host or an internal address
 *   would answer is echoed.
 */

/** Why a URL was not fetched: `reason` a sentence for the caller, `hint` what to do instead. */
export class UrlFetchRefused extends Error {
  constructor(
    readonly reason: string,
    readonly hint: string,
  ) {
    super(reason);
    this.name = "UrlFetchRefused";
  }
}

export interface GuardedFetchOptions {
  readonly policy: ImageUrlPolicy;
  readonly maxBytes: number;
  /** For the whole fetch: every hop and the body. */
  readonly timeoutMs: number;
  /** Redirects followed (default 3). */
  readonly maxRedirects?: number;
  /** Resolves host names in the `public` mode (default: the system's resolver). */
  readonly resolver?: HostResolver;
}

const NOT_PUBLIC_HINT =
  'Give a URL on a public host or send the image as a data URL (a server\'s operator can allow internal hosts: docs/server/README.md, "Images")';
const UNREACHABLE_HINT = "Give a URL this server can reach, or send the image as a data URL";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Raised by the connection's lookup: a host name with an address that is not public. */
class HostNotPublic extends Error {}

/** Every address of a host name (the system's resolver: dns.lookup with `all`). */
export type HostResolver = (
  hostname: string,
  family: number | undefined,
) => Promise<readonly LookupAddress[]>;

const systemResolver: HostResolver = (hostname, family) =>
  new Promise((resolve, reject) => {
    lookupHost(hostname, { all: true, family: family ?? 0 }, (error, addresses) =>
      error === null ? resolve(addresses) : reject(error),
    );
  });

/**
 * The connection's DNS lookup in the `public` mode: every address checked, the checked ones
 * handed to the socket (asked once per connection, so what is checked is what is connected to).
 */
function publicOnlyLookup(resolver: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === "number" ? options.family : undefined;
    resolver(hostname, family).then(
      (addresses) => {
        const first = addresses[0];
        if (first === undefined) {
          callback(new HostNotPublic("not resolved"), []);
        } else if (addresses.some((entry) => nonPublicAddressKind(entry.address) !== undefined)) {
          callback(new HostNotPublic("not public"), []);
        } else if (options.all === true) {
          callback(null, [...addresses]);
        } else {
          callback(null, first.address, first.family);
        }
      },
      () => callback(new HostNotPublic("not resolved"), []),
    );
  };
}

function parseHttpUrl(text: string, base: URL | undefined, which: string): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new UrlFetchRefused(`${which} is not a valid URL`, UNREACHABLE_HINT);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UrlFetchRefused(`${which} is not an http(s) URL`, UNREACHABLE_HINT);
  }
  if (url.username !== "" || url.password !== "") {
    throw new UrlFetchRefused(
      `${which} carries a user name or password, which this server does not send`,
      UNREACHABLE_HINT,
    );
  }
  return url;
}

/** Why a failed connection failed, in words that echo nothing of the other side. */
function connectionFailure(
  error: unknown,
  which: string,
  timeoutMs: number,
  signal: AbortSignal,
): UrlFetchRefused {
  if (error instanceof UrlFetchRefused) return error;
  if (error instanceof HostNotPublic) {
    return new UrlFetchRefused(
      `${which} names a host that does not resolve to public addresses only; this server fetches images from public addresses`,
      NOT_PUBLIC_HINT,
    );
  }
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  // The time limit ends a body being read as a reset connection: the signal tells them apart.
  if (signal.aborted || name === "TimeoutError" || name === "AbortError") {
    return new UrlFetchRefused(
      `${which} did not answer within ${timeoutMs / 1000} s`,
      UNREACHABLE_HINT,
    );
  }
  const why =
    code === "ENOTFOUND" || code === "EAI_AGAIN"
      ? "its host name could not be resolved"
      : code === "ECONNREFUSED"
        ? "the connection was refused"
        : typeof code === "string" && /CERT|TLS|SSL/.test(code)
          ? "its TLS certificate could not be verified"
          : "the connection failed";
  return new UrlFetchRefused(`${which} could not be fetched: ${why}`, UNREACHABLE_HINT);
}

/** One GET; with `lookup` (the `public` mode), to the addresses it checked only. */
function requestOnce(
  url: URL,
  lookup: LookupFunction | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: "GET",
        // A connection of its own: no kept-alive socket of another policy is reused.
        agent: false,
        signal,
        headers: { accept: "image/*", "accept-encoding": "identity" },
        ...(lookup === undefined ? {} : { lookup }),
      },
      resolve,
    );
    request.on("error", reject);
    request.end();
  });
}

async function readCapped(
  response: IncomingMessage,
  maxBytes: number,
  which: string,
): Promise<Uint8Array> {
  const declared = Number(response.headers["content-length"]);
  if (declared > maxBytes) {
    response.destroy();
    throw new UrlFetchRefused(
      `${which} declares ${declared} bytes, more than the ${maxBytes} this server keeps`,
      "Send a smaller image",
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      response.destroy();
      throw new UrlFetchRefused(
        `${which} sent more than the ${maxBytes} bytes this server keeps (it stopped reading there)`,
        "Send a smaller image",
      );
    }
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks, total));
}

/** The checks of one hop before connecting: an IP literal is judged as written. */
function checkHop(url: URL, policy: ImageUrlPolicy, which: string): boolean {
  if (policy.mode !== "public" || isAllowedHost(policy, url)) return false;
  if (isIP(url.hostname.replace(/^\[(.*)\]$/, "$1")) !== 0) {
    const kind = nonPublicAddressKind(url.hostname);
    if (kind !== undefined) {
      throw new UrlFetchRefused(
        `${which} names a non-public address (${kind}); this server fetches images from public addresses`,
        NOT_PUBLIC_HINT,
      );
    }
  }
  return true;
}

/** The body of `text` after at most `maxRedirects` checked redirects. */
export async function fetchGuarded(
  text: string,
  options: GuardedFetchOptions,
): Promise<Uint8Array> {
  const maxRedirects = options.maxRedirects ?? 3;
  const signal = AbortSignal.timeout(options.timeoutMs);
  const lookup = publicOnlyLookup(options.resolver ?? systemResolver);
  let url = parseHttpUrl(text, undefined, "the image URL");
  for (let hop = 0; ; hop += 1) {
    const which = hop === 0 ? "the image URL" : "the image URL's redirect";
    const checked = checkHop(url, options.policy, which);
    let response: IncomingMessage;
    try {
      response = await requestOnce(url, checked ? lookup : undefined, signal);
    } catch (error) {
      throw connectionFailure(error, which, options.timeoutMs, signal);
    }
    const status = response.statusCode ?? 0;
    if (REDIRECT_STATUSES.has(status)) {
      response.destroy();
      const location = response.headers.location;
      if (hop >= maxRedirects) {
        throw new UrlFetchRefused(
          `the image URL redirects more than ${maxRedirects} times`,
          UNREACHABLE_HINT,
        );
      }
      if (location === undefined) {
        throw new UrlFetchRefused(
          `${which} answered ${status} without a Location`,
          UNREACHABLE_HINT,
        );
      }
      url = parseHttpUrl(location, url, "the image URL's redirect");
      continue;
    }
    if (status < 200 || status > 299) {
      response.destroy();
      throw new UrlFetchRefused(`${which} answered ${status}`, UNREACHABLE_HINT);
    }
    try {
      return await readCapped(response, options.maxBytes, which);
    } catch (error) {
      throw connectionFailure(error, which, options.timeoutMs, signal);
    }
  }
}
