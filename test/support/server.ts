/**
 * The HTTP server on a test database: `testServer(database, options)` builds the real app
 * (src/server) with a known operator token; `apiKeyFor(subject)` stores a real API key.
 */
import type { FastifyInstance } from "fastify";
import { buildServer, type ServerOptions } from "../../packages/server/src/server/app.js";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

export const TEST_OPERATOR_TOKEN = "vop_test-operator-token";

export interface TestServer {
  readonly app: FastifyInstance;
  readonly operator: { readonly authorization: string };
  apiKeyFor(subject: string): Promise<{ readonly authorization: string; readonly key: string }>;
}

export async function testServer(
  database: StoreDatabase,
  options: Partial<Omit<ServerOptions, "database">> = {},
  /** Adds test-only routes before the app is ready. */
  setup?: (app: FastifyInstance) => void,
): Promise<TestServer> {
  const app = await buildServer({
    database,
    operatorToken: TEST_OPERATOR_TOKEN,
    rateLimit: false,
    webRoot: false,
    ...options,
  });
  setup?.(app);
  await app.ready();
  return {
    app,
    operator: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
    async apiKeyFor(subject) {
      const { key } = await createApiKey(database, subject);
      return { authorization: `Bearer ${key}`, key };
    },
  };
}
