/**
 * The transport's HTTP POST: Node's own http/https clients with kept-alive connections by
 * default (a fraction of fetch's cost per request: a gateway pays it on every model call), or
 * a caller's fetch (TransportOptions.fetch).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** A response as the transport reads it. */
export interface HttpReply {
  readonly status: number;
  /** A header's value (names are case-insensitive), or null. */
  header(name: string): string | null;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The body's bytes as they arrive. */
  chunks(): AsyncIterable<Uint8Array>;
}

export interface HttpPostInit {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** Aborting it ends the request and its response, at any point. */
  readonly signal: AbortSignal;
}

export type HttpPost = (url: string, init: HttpPostInit) => Promise<HttpReply>;

const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/** POST with node:http / node:https; rejects on connection failures and on abort. */
export const nodeHttpPost: HttpPost = (url, init) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === "https:";
    const options = {
      method: "POST",
      headers: { ...init.headers, "content-length": String(init.body.byteLength) },
      signal: init.signal,
    };
    const onResponse = (response: IncomingMessage) => resolve(replyOf(response));
    const request = secure
      ? httpsRequest(target, { ...options, agent: httpsAgent }, onResponse)
      : httpRequest(target, { ...options, agent: httpAgent }, onResponse);
    request.on("error", reject);
    request.end(init.body);
  });

function replyOf(response: IncomingMessage): HttpReply {
  return {
    status: response.statusCode ?? 0,
    header(name) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
    async text() {
      const parts: Buffer[] = [];
      for await (const chunk of response) parts.push(chunk as Buffer);
      return Buffer.concat(parts).toString("utf8");
    },
    chunks: () => response,
  };
}

/** The same POST through a fetch (the caller's). */
export function fetchPost(doFetch: typeof fetch): HttpPost {
  return async (url, init) => {
    const response = await doFetch(url, {
      method: "POST",
      headers: { ...init.headers },
      body: init.body as Uint8Array<ArrayBuffer>,
      signal: init.signal,
    });
    return {
      status: response.status,
      header: (name) => response.headers.get(name),
      text: () => response.text(),
      async *chunks() {
        if (response.body === null) return;
        const reader = response.body.getReader();
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) return;
          yield chunk.value;
        }
      },
    };
  };
}
