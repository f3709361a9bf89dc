import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import { VerbatimError } from "verbatim-llm/core";
import { ConsoleService } from "../gateway/console/service.js";
import type { ConsolePages } from "../gateway/console/worker/pages.js";
import type { LimitBackend } from "../gateway/limits/shared-limits.js";
import { checkHealth } from "../gateway/maintenance/health.js";
import { GatewayMessageStore } from "../gateway/index.js";
import { openApiKeyLookup } from "../gateway/keys/api-key-cache.js";
import type { StoreDatabase } from "../store/database.js";
import { apiKeyAuth, operatorAuth } from "./auth.js";
import { clientErrorHandler, frameworkErrorHandler, refuseExpectation } from "./client-errors.js";
import { handleError, sendError } from "./errors.js";
import {
  DEFAULT_FAILED_AUTHENTICATION_LIMIT,
  FailedAuthenticationLimit,
} from "./failed-authentication.js";
import { checkFieldIds, checkPathIds } from "./id-shape.js";
import { InFlightWork } from "./in-flight.js";
import { openApiInfo } from "./openapi-info.js";
import { declaredEncodingProblem, registerJsonBodyParser } from "./json-body.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limit.js";
import { sharedLimitsFor } from "./shared-limits.js";
import { RouteTable } from "./route-table.js";
import { takeQueryKey } from "./query-key.js";
import { refuseOtherRequestTargets } from "./request-target.js";
import { registerCallerRoutes } from "./routes/caller.js";
import { consoleRouteHeaders } from "./console/reply-headers.js";
import { registerConsoleRoutes } from "./routes/console.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerMissingPageRoutes, registerWebRoutes } from "./routes/web.js";
import {
  checkingIntervalMs,
  checkTimeouts,
  DEFAULT_TIMEOUTS,
  type ServerTimeouts,
} from "./timeouts.js";
import type { Compression } from "../gateway/recording/bodies/compression.js";
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
  /**
   * Failed authentications per client address (default 20, then 20 a minute); over it, 429
   * `authentication_rate_limited` for any credential. `false` turns it off.
   */
  readonly failedAuthenticationLimit?: RateLimitOptions | false;
  /**
   * Where the two limits above keep their buckets: by default shared by every server of a
   * PostgreSQL database (its table `verbatim_rate_limits`), in process on SQLite; a
   * `LimitBackend` (Redis) shares them there; `false` keeps them in process
   * (docs/scale.md, "Limits across servers").
   */
  readonly sharedLimits?: LimitBackend | false;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, or
   * `loopback`, `linklocal`, `uniquelocal`); by default the client is the connection's peer.
   */
  readonly trustedProxies?: readonly string[];
  /** Header, body and idle timeouts (docs/server/README.md, "Timeouts"); defaults DEFAULT_TIMEOUTS. */
  readonly timeouts?: Partial<ServerTimeouts>;
  /** Upstream model providers for POST /v1/responses (default: none configured). */
  readonly upstream?: UpstreamConfig;
  /**
   * The built console page (dist/web); `false` serves none; `{ missing }` answers the page's
   * addresses with a page saying why there is none and how to build it.
   */
  readonly webRoot?: string | false | { readonly missing: string };
  /**
   * Bytes of parsed messages the server's message store keeps for context reads (default
   * 64 MiB; 0 turns the cache off; docs/store.md, "Message cache").
   */
  readonly messageCacheBytes?: number;
  /**
   * Valid API keys kept in memory on PostgreSQL while the server hears of every key change
   * (default on; docs/server/README.md, "API keys"); `false` reads each request's key.
   */
  readonly apiKeyCache?: boolean;
  /**
   * Run the recorded calls' raw bodies (/v1/messages, /v1/chat/completions) through the
   * trajectory sanitizer before storing them (default false: exact bytes; docs/server/recorded-calls.md,
   * "Recorded calls"). `verbatim serve` reads VERBATIM_RECORD_REDACT=1.
   */
  readonly recordRedact?: boolean;
  /**
   * How recorded bodies' new pieces are compressed (default `auto`: zstd where this Node has
   * it, else brotli; docs/server/recorded-calls.md). `verbatim serve` reads
   * VERBATIM_RECORD_COMPRESSION.
   */
  readonly recordCompression?: Compression;
  /**
   * Packs a subject's small pieces of recorded bytes once it has recorded nothing for this long
   * (docs/server/recorded-calls.md; 0 or unset: never). `verbatim serve` reads
   * VERBATIM_RECORD_PACK_AFTER_MS (default 30 s).
   */
  readonly recordPackAfterMs?: number;
  /**
   * Build the console's message and job pages in a worker thread with its own read-only
   * connection to the store (default on, with named prepared statements on PostgreSQL);
   * `false` builds them on the event loop. A store that cannot be opened again from its
   * location (in-memory SQLite) always builds them on the event loop (docs/console.md).
   */
  readonly consoleWorker?:
    | false
    | {
        readonly preparedStatements?: boolean;
        /** PostgreSQL: the worker's pool (default 2; server/connection-budget.ts). */
        readonly poolSize?: number;
        /** PostgreSQL behind a pooler in transaction mode (store/database.ts). */
        readonly pooler?: "transaction";
      };
}

declare module "fastify" {
  interface FastifyInstance {
    /** Where the console's message and job pages are built. */
    readonly consolePages: ConsolePages;
  }
}

export const DEFAULT_MESSAGE_CACHE_MB = 64;

export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_RATE_LIMIT: RateLimitOptions = { perMinute: 600, burst: 100 };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's x-request-id when it is well formed, else a new one. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The longest path segment the router reads (ids are at most 200 characters). */
const MAX_PARAM_LENGTH = 1024;

/**
 * Builds the HTTP server (not listening yet): console routes under the operator token, caller
 * routes (/v1) under per-subject API keys, /healthz open, the console page at /.
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const timeouts = checkTimeouts({ ...DEFAULT_TIMEOUTS, ...options.timeouts });
  // Set once close() begins (preClose, below).
  let closing = false;
  const app = Fastify({
    serverFactory: (router, settings) => {
      const server = createServer(settings.http ?? {}, (request, response) => {
        // A response that ends while the server closes ends its connection too: close waits
        // for connections, and a kept-alive one whose answer began before close (a stream a
        // route took over from the framework) would hold it until its idle timeout.
        response.once("finish", () => {
          if (closing) request.socket.end();
        });
        router(request, response);
      });
      server.keepAliveTimeout = timeouts.idleMs;
      server.requestTimeout = timeouts.bodyMs;
      return server;
    },
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    genReqId: requestIdOf,
    // A Gemini client's `?key=` leaves the URL before routing and logging (query-key.ts).
    rewriteUrl: takeQueryKey,
    // Node's parser closes slow and idle connections; the 408 it raises is answered by
    // clientErrorHandler in the error shape.
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.bodyMs,
      keepAliveTimeout: timeouts.idleMs,
      connectionsCheckingInterval: checkingIntervalMs(timeouts),
    },
    requestTimeout: timeouts.bodyMs,
    keepAliveTimeout: timeouts.idleMs,
    ...(options.trustedProxies === undefined || options.trustedProxies.length === 0
      ? {}
      : { trustProxy: [...options.trustedProxies] }),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    // The 503 of a closing server is answered below, in the error shape.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
  });
  app.server.on("checkExpectation", refuseExpectation);
  app.decorateRequest("subjectUid", "");
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  const routes = new RouteTable();
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = routes.allowedMethods(path);
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      return sendError(
        request,
        reply,
        new VerbatimError("method_not_allowed", `${path} does not take ${request.method}`, {
          where: "method",
          hint: `Use ${allowed.join(", ")}`,
          details: { allowed_methods: allowed },
        }),
      );
    }
    return sendError(
      request,
      reply,
      new VerbatimError("route_not_found", `no route for ${request.method} ${path}`, {
        hint: "See docs/server/README.md for the routes",
      }),
    );
  });
  // Graceful shutdown: close() stops accepting and waits for in-flight requests; their
  // connections are told to close, so no idle keep-alive connection holds the exit back.
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Handlers keep running when their client hangs up: close() waits for every one of them.
  const work = new InFlightWork();
  app.addHook("onRoute", (route) => {
    routes.add(route.method, route.url);
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
    await instance.consolePages.close();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (closing) {
      reply.header("connection", "close");
      await sendError(
        request,
        reply,
        new VerbatimError("server_closing", "the server is shutting down", {
          hint: "Retry on another server or once this one is back",
        }),
      );
    }
  });
  app.addHook("onRequest", refuseOtherRequestTargets);
  // The body's declared encoding is checked before a byte of it is read (after authentication).
  app.addHook("preParsing", async (request, reply) => {
    const problem = declaredEncodingProblem(request);
    if (problem !== undefined) await sendError(request, reply, problem);
  });
  // Ids have one shape; any other names nothing and never reaches a query: path ids before the
  // body is validated, id fields of a body or query once it is.
  app.addHook("preValidation", checkPathIds);
  app.addHook("preHandler", checkFieldIds);
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  registerJsonBodyParser(app);

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

  const shared = sharedLimitsFor(app, options.database, options.sharedLimits);
  const rate = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const limiter = rate === false ? undefined : shared.apiKeys(rate, new RateLimiter(rate));
  const failureRate = options.failedAuthenticationLimit ?? DEFAULT_FAILED_AUTHENTICATION_LIMIT;
  const failures =
    failureRate === false
      ? undefined
      : new FailedAuthenticationLimit(shared.addresses(failureRate, new RateLimiter(failureRate)));

  // One message store (and so one message cache) for the console and the caller routes.
  const cacheBytes = options.messageCacheBytes ?? DEFAULT_MESSAGE_CACHE_MB * 1024 * 1024;
  const store = new GatewayMessageStore(options.database, { cacheBytes });
  // The console's reads; its pages in a worker thread (its own cache of the same size), ended
  // on close.
  const consoleService = new ConsoleService(options.database, {
    store,
    worker:
      options.consoleWorker === false
        ? false
        : {
            ...options.consoleWorker,
            cacheBytes,
            onLost: (error) => app.log.error({ err: error }, "the console's worker thread stopped"),
          },
  });
  app.decorate("consolePages", consoleService.pages);
  // A listening server starts the thread now; one answering injected requests (tests) at its first page.
  app.addHook("onListen", async () => consoleService.warm());
  registerHealthRoutes(app, () => checkHealth(options.database));
  await app.register(async (scope) => {
    scope.addHook("onRequest", consoleRouteHeaders);
    scope.addHook("onRequest", operatorAuth(options.operatorToken, failures));
    registerConsoleRoutes(scope, consoleService);
  });
  const keys = await openApiKeyLookup(options.database, {
    cache: options.apiKeyCache !== false,
    onError: (error) =>
      app.log.warn({ err: error }, "API key change notifications lost; reconnecting"),
  });
  app.addHook("onClose", () => keys.close());
  try {
    await app.register(async (scope) => {
      scope.addHook("onRequest", apiKeyAuth(keys, limiter, failures));
      registerCallerRoutes(scope, {
        database: options.database,
        upstream: options.upstream,
        store,
        recordRedact: options.recordRedact === true,
        ...(options.recordCompression === undefined
          ? {}
          : { recordCompression: options.recordCompression }),
        ...(options.recordPackAfterMs === undefined
          ? {}
          : { recordPackAfterMs: options.recordPackAfterMs }),
      });
    });
    if (typeof options.webRoot === "string") registerWebRoutes(app, options.webRoot);
    else if (typeof options.webRoot === "object") registerMissingPageRoutes(app, options.webRoot);
  } catch (error) {
    // The listening connection must not outlive a server that was never returned.
    await keys.close();
    throw error;
  }
  return app;
}
