import { randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import { VerbatimError } from "../core/errors.js";
import { safeParseStrictJson } from "../core/strict-json.js";
import { GatewayMessageStore } from "../gateway/index.js";
import type { StoreDatabase } from "../store/index.js";
import { openApiKeyLookup } from "./api-key-cache.js";
import { apiKeyAuth, operatorAuth } from "./auth.js";
import { handleError, sendError } from "./errors.js";
import { InFlightWork } from "./in-flight.js";
import { openApiInfo } from "./openapi-info.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limit.js";
import { registerCallerRoutes } from "./routes/caller.js";
import { registerConsoleRoutes } from "./routes/console.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerWebRoutes } from "./routes/web.js";
import type { UpstreamConfig } from "./upstream/config.js";
import { sharedComponentSchemas, swaggerTransform, zodValidatorCompiler } from "./zod-schemas.js";

export interface ServerOptions {
  /** An open, migrated store (src/store). The server does not close it. */
  readonly database: StoreDatabase;
  /** The bearer token of the operator console routes. */
  readonly operatorToken: string;
  /** Structured logs (pino); silent when absent. */
  readonly logger?: FastifyBaseLogger;
  /** Largest request body in bytes (default 8 MiB); larger bodies get 413. */
  readonly bodyLimitBytes?: number;
  /** Per-API-key rate limit (default 600 a minute, bursts of 100); `false` turns it off. */
  readonly rateLimit?: RateLimitOptions | false;
  /** Upstream model providers for POST /v1/responses (default: none configured). */
  readonly upstream?: UpstreamConfig;
  /** The built console page (dist/web); `false` serves none. */
  readonly webRoot?: string | false;
  /**
   * Bytes of parsed messages the server's message store keeps for context reads (default
   * 64 MiB; 0 turns the cache off; docs/store.md, "Message cache").
   */
  readonly messageCacheBytes?: number;
  /**
   * Valid API keys kept in memory on PostgreSQL while the server hears of every key change
   * (default on; docs/server.md, "API keys"); `false` reads each request's key.
   */
  readonly apiKeyCache?: boolean;
}

export const DEFAULT_MESSAGE_CACHE_MB = 64;

export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_RATE_LIMIT: RateLimitOptions = { perMinute: 600, burst: 100 };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the HTTP server (not listening yet): console routes under the operator token, caller
 * routes (/v1) under per-subject API keys, /healthz open, the console page at /.
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorateRequest("subjectUid", "");
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new VerbatimError(
        "route_not_found",
        `no route for ${request.method} ${request.url.split("?")[0]}`,
        {
          hint: "See docs/server.md for the routes",
        },
      ),
    ),
  );
  // Graceful shutdown: close() stops accepting and waits for in-flight requests; their
  // connections are told to close, so no idle keep-alive connection holds the exit back.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Handlers keep running when their client hangs up: close() waits for every one of them.
  const work = new InFlightWork();
  app.addHook("onRoute", (route) => {
    const handler = route.handler;
    route.handler = async function (this: FastifyInstance, request, reply) {
      work.start();
      try {
        return await handler.call(this, request, reply);
      } finally {
        work.end();
      }
    };
  });
  app.addHook("onClose", async (instance) => {
    if (work.running > 0) instance.log.info({ running: work.running }, "waiting for handlers");
    await work.idle();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    const parsed = safeParseStrictJson(text);
    if (parsed.ok) {
      done(null, parsed.value);
      return;
    }
    const { problem } = parsed;
    done(
      new VerbatimError("invalid_json", `the body is not valid JSON: ${problem.message}`, {
        where: `body at line ${problem.line}, column ${problem.column} (${problem.path})`,
        hint: "Send one JSON value; nothing was written",
      }),
      undefined,
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: openApiInfo,
      components: {
        securitySchemes: {
          operatorToken: { type: "http", scheme: "bearer", description: "The operator token." },
          apiKey: { type: "http", scheme: "bearer", description: "A per-subject API key." },
        },
        schemas: sharedComponentSchemas(),
      },
    },
    transform: swaggerTransform as never,
  });

  const limiter =
    options.rateLimit === false
      ? undefined
      : new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);

  // One message store (and so one message cache) for the console and the caller routes.
  const store = new GatewayMessageStore(options.database, {
    cacheBytes: options.messageCacheBytes ?? DEFAULT_MESSAGE_CACHE_MB * 1024 * 1024,
  });
  registerHealthRoutes(app, options.database);
  await app.register(async (scope) => {
    scope.addHook("onRequest", operatorAuth(options.operatorToken));
    registerConsoleRoutes(scope, options.database, store);
  });
  const keys = await openApiKeyLookup(options.database, {
    cache: options.apiKeyCache !== false,
    onError: (error) =>
      app.log.warn({ err: error }, "API key change notifications lost; reconnecting"),
  });
  app.addHook("onClose", () => keys.close());
  try {
    await app.register(async (scope) => {
      scope.addHook("onRequest", apiKeyAuth(keys, limiter));
      registerCallerRoutes(scope, {
        database: options.database,
        upstream: options.upstream,
        store,
      });
    });
    if (options.webRoot !== undefined && options.webRoot !== false) {
      registerWebRoutes(app, options.webRoot);
    }
  } catch (error) {
    // The listening connection must not outlive a server that was never returned.
    await keys.close();
    throw error;
  }
  return app;
}
