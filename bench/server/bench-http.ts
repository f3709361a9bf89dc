// HTTP helpers the recording benchmarks share: one call with its whole answer, and an operator
// route's JSON.
import { request as httpRequest, type Agent } from "node:http";

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One request on `agent`; the answer once it has ended. */
export function httpCall(
  agent: Agent,
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent =
      body === undefined
        ? headers
        : { ...headers, "content-length": String(Buffer.byteLength(body)) };
    const call = httpRequest(url, { method, agent, headers: sent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
        }),
      );
      response.on("error", reject);
    });
    call.on("error", reject);
    call.end(body);
  });
}

/** An operator route's JSON (undefined for 404). */
export async function operatorJson(
  agent: Agent,
  serverUrl: string,
  token: string,
  path: string,
): Promise<unknown> {
  const answer = await httpCall(agent, "GET", `${serverUrl}${path}`, {
    authorization: `Bearer ${token}`,
  });
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) {
    throw new Error(`GET ${path}: ${answer.status} ${answer.body.toString("utf8").slice(0, 300)}`);
  }
  return JSON.parse(answer.body.toString("utf8"));
}
