import type { IncomingMessage } from "node:http";
import type { Sanitizer } from "verbatim-llm/trajectory";
import { decodeBody } from "../../gateway/recording/usage.js";
import { upstreamErrorSanitizer } from "../../gateway/upstream/scrub.js";
import type { UpstreamConfig } from "../upstream/config.js";

/**
 * An upstream's error answer on a pass-through route (a status of 400 or more) is read whole and
 * scrubbed by the sanitizer /v1/responses uses for upstream errors (gateway/upstream/scrub.ts:
 * keys, masked key fragments, credentials in URLs, the configured upstream's hosts) before the
 * client or the store sees it. It is small, so holding it costs nothing a stream would need.
 */

const sanitizers = new WeakMap<UpstreamConfig, Sanitizer>();

/** The error sanitizer of an upstream configuration (built once: its rules are compiled). */
export function errorSanitizerOf(config: UpstreamConfig): Sanitizer {
  let sanitizer = sanitizers.get(config);
  if (sanitizer === undefined) {
    sanitizer = upstreamErrorSanitizer(config);
    sanitizers.set(config, sanitizer);
  }
  return sanitizer;
}

export interface ScrubbedError {
  /** The scrubbed body, decoded (empty when its encoding could not be read). */
  readonly body: Buffer;
  /** The upstream's headers for it: no content encoding, its new length. */
  readonly headers: Record<string, string>;
}

/** Reads an error answer whole; undefined when it broke off. */
export function readWhole(upstream: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    upstream.on("data", (chunk: Buffer) => chunks.push(chunk));
    upstream.once("end", () => resolve(Buffer.concat(chunks)));
    upstream.once("error", () => resolve(undefined));
    upstream.once("close", () => {
      if (!upstream.readableEnded) resolve(undefined);
    });
  });
}

/** The error body scrubbed, with the headers that describe it. */
export function scrubError(
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  sanitizer: Sanitizer,
): ScrubbedError {
  // A body that cannot be decoded cannot be scrubbed: it is dropped, never passed on unread.
  const decoded = decodeBody(body, headers["content-encoding"]);
  const scrubbed =
    decoded === undefined
      ? Buffer.alloc(0)
      : Buffer.from(sanitizer.sanitizeText(decoded.toString("utf8")).value, "utf8");
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name !== "content-encoding" && name !== "content-length" && name !== "transfer-encoding") {
      out[name] = value;
    }
  }
  out["content-length"] = String(scrubbed.length);
  return { body: scrubbed, headers: out };
}
