/**
 * The server on loopback with the raw byte-recording upstream (raw-upstream.ts) behind its
 * Anthropic and OpenAI providers, for the tests of the pass-through routes.
 */
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { startRawUpstream, type RawUpstream } from "./raw-upstream.js";
import { testServer, type TestServer } from "./server.js";

export interface RawUpstreamServer {
  readonly upstream: RawUpstream;
  readonly server: TestServer;
  /** `http://127.0.0.1:<port>` (no path). */
  readonly baseUrl: string;
  close(): Promise<void>;
}

export async function startRawUpstreamServer(database: StoreDatabase): Promise<RawUpstreamServer> {
  const upstream = await startRawUpstream();
  const server = await testServer(database, {
    upstream: upstreamConfigFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-upstream-key",
      ANTHROPIC_BASE_URL: upstream.url,
      OPENAI_API_KEY: "sk-openai-upstream-key",
      OPENAI_BASE_URL: `${upstream.url}/v1`,
    }),
  });
  await server.app.listen({ host: "127.0.0.1", port: 0 });
  const address = server.app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    upstream,
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      await server.app.close();
      await upstream.close();
    },
  };
}
