// A bare pass-through proxy in its own process, the floor of any server between a caller and
// the upstream: it reads the request, sends it to the upstream on a kept-alive connection,
// reads the whole answer and replies with a small JSON body. No parsing, storage or checks.
// `node bin/run-ts.js bench/server/bare-proxy.ts <upstream URL>` prints its URL.
import { Agent, createServer, request } from "node:http";

const upstreamUrl = process.argv[2];
if (upstreamUrl === undefined) throw new Error("usage: bare-proxy.ts <upstream URL>");
const agent = new Agent({ keepAlive: true });
const server = createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
  incoming.on("end", () => {
    const forward = request(
      `${upstreamUrl}/v1/messages`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "x-api-key": "sk-ant-bench",
          "anthropic-version": "2023-06-01",
        },
      },
      (answer) => {
        let length = 0;
        answer.on("data", (chunk: Buffer) => (length += chunk.length));
        answer.on("end", () => {
          outgoing.setHeader("content-type", "application/json");
          outgoing.end(JSON.stringify({ upstreamStatus: answer.statusCode, bytes: length }));
        });
      },
    );
    forward.on("error", (error) => {
      outgoing.statusCode = 502;
      outgoing.end(String(error));
    });
    forward.end(Buffer.concat(chunks));
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
