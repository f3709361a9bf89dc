/**
 * HTTP/1.1 over a raw socket, for requests no HTTP client sends (a bad method, huge headers, a
 * bad Content-Length, invalid bytes) and for timing what the server does with a slow client.
 *
 *   const reply = await rawRequest(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
 *   reply.status; reply.headers["x-request-id"]; reply.body; reply.closedAfterMs
 */
import { connect, type Socket } from "node:net";

export interface RawReply {
  /** 0 when the server closed the connection without a reply. */
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Everything the server sent on the connection (pipelined replies too). */
  readonly received: string;
  /** Milliseconds from connecting until the server closed the connection (or the wait ended). */
  readonly closedAfterMs: number;
  /** Whether the server closed the connection before `waitMs` passed. */
  readonly closedByServer: boolean;
}

function parseReply(bytes: Buffer): Pick<RawReply, "status" | "headers" | "body"> {
  const text = bytes.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return { status: 0, headers: {}, body: text };
  const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(end + 4);
  const length = headers["content-length"];
  if (length !== undefined) {
    body = Buffer.from(body, "utf8").subarray(0, Number(length)).toString("utf8");
  }
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body };
}

/**
 * Connects, lets `write` send what it likes (at once or over time), and reads until the server
 * closes the connection or `waitMs` passes. Only the first reply on the connection is parsed.
 */
export function rawExchange(
  port: number,
  write: (socket: Socket) => void,
  waitMs = 10_000,
): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const started = performance.now();
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        ...parseReply(Buffer.concat(chunks)),
        received: Buffer.concat(chunks).toString("utf8"),
        closedAfterMs: performance.now() - started,
        closedByServer,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => write(socket));
  });
}

/** Sends one request (text or bytes) and reads the reply until the server closes. */
export function rawRequest(port: number, request: string | Buffer, waitMs = 10_000) {
  return rawExchange(port, (socket) => socket.write(request), waitMs);
}

/** An HTTP/1.1 request text with `Connection: close` and a Content-Length for the body. */
export function requestText(
  method: string,
  path: string,
  headers: Readonly<Record<string, string>> = {},
  body: string | Buffer = "",
): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1"];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  head.push(`Content-Length: ${Buffer.byteLength(body)}`, "Connection: close", "", "");
  return Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), Buffer.from(body)]);
}
