/**
 * A local upstream that answers every POST with the same small Anthropic Messages JSON, after
 * reading the request's body without parsing it: for tests and benchmarks of large request
 * bodies, where the upstream's own work on the body must not load the server's event loop
 * (it runs in the same process).
 */
import { createServer, type Server } from "node:http";

export interface FixedAnswerUpstream {
  readonly url: string;
  /** Requests answered so far. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** The answer's bytes. */
export const FIXED_ANSWER = JSON.stringify({
  id: "msg_01FixedAnswer",
  type: "message",
  role: "assistant",
  model: "claude-test",
  content: [{ type: "text", text: "Noted." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 3 },
});

/** `beforeAnswer`: awaited with the request's body before each answer (the body is kept only then). */
export async function startFixedAnswerUpstream(
  beforeAnswer?: (body: Buffer) => Promise<void>,
): Promise<FixedAnswerUpstream> {
  let answered = 0;
  const server: Server = createServer((request, response) => {
    const pieces: Buffer[] = [];
    request.on("data", (piece: Buffer) => {
      if (beforeAnswer !== undefined) pieces.push(piece);
    });
    request.on("end", () => {
      void (beforeAnswer?.(Buffer.concat(pieces)) ?? Promise.resolve()).then(() => {
        answered++;
        response.writeHead(200, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(FIXED_ANSWER)),
        });
        response.end(FIXED_ANSWER);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    answered: () => answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
