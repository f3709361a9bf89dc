/**
 * The server on loopback with a stub model of each wire format behind it, for the Responses
 * API conformance tests: each stub is a local HTTP server speaking that provider's wire format
 * (test/support/provider-servers), not the provider. Models are routed by prefix:
 * `claude-*` → Anthropic, `gpt-*` → OpenAI Responses, `gemini-*` → Gemini, `chat-*` → the Chat
 * Completions format (OpenRouter's endpoint).
 */
import { sql } from "kysely";
import OpenAI from "openai";
import { afterAll, beforeAll } from "vitest";
import type { ProviderId } from "../../packages/library/src/providers/index.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { uniqueName } from "./databases.js";
import { startLocalProvider, type ProviderServer } from "./provider-servers/index.js";
import { testServer, type TestServer } from "./server.js";

export interface StubbedServer {
  readonly server: TestServer;
  readonly baseUrl: string;
  readonly key: string;
  readonly subject: string;
  readonly stubs: Readonly<
    Record<"anthropic" | "openai-responses" | "gemini" | "openrouter", ProviderServer>
  >;
  /** POSTs JSON with the subject's key; returns status and parsed body. */
  post(path: string, body: unknown, key?: string): Promise<{ status: number; body: any }>;
  get(path: string, key?: string): Promise<{ status: number; body: any }>;
  /** The last request body a stub received, parsed. */
  lastSent(provider: ProviderId): any;
  /** Rows of ai_gateway_messages of the subject. */
  rowCount(subject?: string): Promise<number>;
  close(): Promise<void>;
}

export async function startStubbedServer(
  database: StoreDatabase,
  /** More settings of the server's environment (e.g. VERBATIM_IMAGE_URL_HOSTS). */
  env: Readonly<Record<string, string>> = {},
): Promise<StubbedServer> {
  const stubs = {
    anthropic: await startLocalProvider("anthropic"),
    "openai-responses": await startLocalProvider("openai-responses"),
    gemini: await startLocalProvider("gemini"),
    openrouter: await startLocalProvider("openrouter"),
  };
  const server = await testServer(database, {
    upstream: upstreamConfigFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: stubs.anthropic.baseUrl,
      OPENAI_API_KEY: "sk-proj-test",
      OPENAI_BASE_URL: stubs["openai-responses"].baseUrl,
      GEMINI_API_KEY: "gemini-test",
      GEMINI_BASE_URL: stubs.gemini.baseUrl,
      OPENROUTER_API_KEY: "sk-or-test",
      OPENROUTER_BASE_URL: stubs.openrouter.baseUrl,
      VERBATIM_MODEL_PROVIDERS:
        "claude-*=anthropic,gpt-*=openai-responses,gemini-*=gemini,chat-*=openrouter",
      ...env,
    }),
  });
  await server.app.listen({ host: "127.0.0.1", port: 0 });
  const address = server.app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const subject = uniqueName("subject");
  const { key } = await server.apiKeyFor(subject);
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const call = async (method: string, path: string, body: unknown, withKey: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${withKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
  };
  return {
    server,
    baseUrl,
    key,
    subject,
    stubs,
    post: (path, body, withKey = key) => call("POST", path, body, withKey),
    get: (path, withKey = key) => call("GET", path, undefined, withKey),
    lastSent(provider) {
      const stub = stubs[provider as keyof typeof stubs];
      const last = stub.requests[stub.requests.length - 1];
      return last === undefined ? undefined : JSON.parse(last.body.toString("utf8"));
    },
    async rowCount(of = subject) {
      const result = await sql<{ count: number | string }>`
        select count(*) as count from ai_gateway_messages where subject_uid = ${of}`.execute(
        database.db,
      );
      return Number(result.rows[0]?.count ?? 0);
    },
    async close() {
      await server.app.close();
      for (const stub of Object.values(stubs)) await stub.close();
    },
  };
}

/**
 * A stubbed server for the tests of one describe block (started before them, closed after),
 * with an `openai` client holding the subject's key and no retries.
 */
export function stubbedOpenAIClient(
  getDatabase: () => StoreDatabase,
  env: Readonly<Record<string, string>> = {},
): {
  readonly stubbed: () => StubbedServer;
  readonly client: () => OpenAI;
} {
  let stubbed: StubbedServer | undefined;
  let client: OpenAI | undefined;
  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase(), env);
    client = new OpenAI({ apiKey: stubbed.key, baseURL: stubbed.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await stubbed?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the stubbed server is not started");
    return value;
  };
  return { stubbed: () => started(stubbed), client: () => started(client) };
}
