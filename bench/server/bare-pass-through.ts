// A bare pass-through proxy in its own process, the floor of /v1/messages: it reads the
// request, sends the same bytes with the same path to the upstream on a kept-alive connection,
// and streams the upstream's status, headers and bytes back. No parsing, storage or checks.
// `node bin/run-ts.js bench/server/bare-pass-through.ts <upstream URL>` prints its URL.
import { Agent, createServer, request } from "node:http";

const upstreamUrl = process.argv[2];
if (upstreamUrl === undefined) throw new Error("usage: bare-pass-through.ts <upstream URL>");
const agent = new Agent({ keepAlive: true });
const server = createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
  incoming.on("end", () => {
    const headers = { ...incoming.headers };
    delete headers.host;
    delete headers.connection;
    const forward = request(
      `${upstreamUrl}${incoming.url ?? "/"}`,
      { method: "POST", agent, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on("error", (error) => {
      outgoing.statusCode = 502;
      outgoing.end(String(error));
    });
    forward.end(Buffer.concat(chunks));
  });
});
// Idle kept-alive connections stay open as long as the server's (65 s), not Node's 5 s: the
// bench's client reuses its connection after the other targets' blocks.
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
