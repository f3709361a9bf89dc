import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import {
  openDatabase,
  type StoreDatabase,
  parseDatabaseLocation,
  type DatabaseLocation,
  migrateDatabase,
} from "../store/index.js";
import { switchFromEnv, wholeNumberFromEnv } from "./env.js";
import {
  buildServer,
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_MESSAGE_CACHE_MB,
  DEFAULT_RATE_LIMIT,
} from "./app.js";
import {
  DEFAULT_FAILED_AUTHENTICATION_LIMIT,
  trustedProxiesFromEnv,
} from "./failed-authentication.js";
import type { RateLimitOptions } from "./rate-limit.js";
import { timeoutsFromEnv } from "./timeouts.js";
import { upstreamConfigFromEnv } from "./upstream/config.js";

export interface StartServerOptions {
  /** `--db`: a SQLite path or a postgres:// URL (default ./.verbatim/verbatim.sqlite). */
  readonly database?: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: FastifyBaseLogger;
}

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly database: StoreDatabase;
  readonly url: string;
  readonly operatorToken: string;
  /** Whether the token was generated (not from VERBATIM_OPERATOR_TOKEN). */
  readonly generatedToken: boolean;
  /** Stops accepting, finishes in-flight requests, then closes the database. */
  close(): Promise<void>;
}

export const DEFAULT_DATABASE = "./.verbatim/verbatim.sqlite";
export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = "127.0.0.1";

/** The built console page, when this checkout or package has one. */
export function defaultWebRoot(): string | false {
  const root = fileURLToPath(new URL("../../dist/web", import.meta.url));
  return existsSync(resolve(root, "index.html")) ? root : false;
}

function rateLimitFromEnv(env: StartServerOptions["env"]): RateLimitOptions | false {
  const perMinute = wholeNumberFromEnv(env, "VERBATIM_RATE_LIMIT_PER_MINUTE");
  if (perMinute === 0) return false;
  if (perMinute === undefined) return DEFAULT_RATE_LIMIT;
  const burst = wholeNumberFromEnv(env, "VERBATIM_RATE_LIMIT_BURST");
  return burst === undefined ? { perMinute } : { perMinute, burst };
}

/** VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE: failures allowed in a row, and a minute's refill. */
function failedAuthenticationLimitFromEnv(
  env: StartServerOptions["env"],
): RateLimitOptions | false {
  const perMinute = wholeNumberFromEnv(env, "VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE");
  if (perMinute === 0) return false;
  if (perMinute === undefined) return DEFAULT_FAILED_AUTHENTICATION_LIMIT;
  return { perMinute, burst: perMinute };
}

/**
 * Opens `--db` text, creating the SQLite folder when needed. `env` may turn PostgreSQL's named
 * prepared statements off (`VERBATIM_PG_PREPARED_STATEMENTS=off`, for a pooler that cannot
 * keep them).
 */
export async function openStore(
  text: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<StoreDatabase> {
  const preparedStatements = switchFromEnv(env, "VERBATIM_PG_PREPARED_STATEMENTS") ?? true;
  let location: DatabaseLocation = parseDatabaseLocation(text);
  if (location.dialect === "sqlite" && location.path !== ":memory:") {
    location = { dialect: "sqlite", path: resolve(cwd, location.path) };
    mkdirSync(dirname(location.path), { recursive: true });
  }
  return openDatabase(location, { preparedStatements });
}

/** `verbatim serve`: open and migrate the database, then listen. */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  // Settings from the environment first: a typo stops the start before the database is touched.
  const trustedProxies = trustedProxiesFromEnv(env);
  const settings = {
    upstream: upstreamConfigFromEnv(env),
    rateLimit: rateLimitFromEnv(env),
    failedAuthenticationLimit: failedAuthenticationLimitFromEnv(env),
    timeouts: timeoutsFromEnv(env),
    ...(trustedProxies === undefined ? {} : { trustedProxies }),
    bodyLimitBytes:
      wholeNumberFromEnv(env, "VERBATIM_BODY_LIMIT_BYTES") ?? DEFAULT_BODY_LIMIT_BYTES,
    messageCacheBytes:
      (wholeNumberFromEnv(env, "VERBATIM_MESSAGE_CACHE_MB") ?? DEFAULT_MESSAGE_CACHE_MB) *
      1024 *
      1024,
    apiKeyCache: switchFromEnv(env, "VERBATIM_API_KEY_CACHE") ?? true,
    recordRedact: switchFromEnv(env, "VERBATIM_RECORD_REDACT") ?? false,
  };
  const database = await openStore(
    options.database ?? DEFAULT_DATABASE,
    options.cwd ?? process.cwd(),
    env,
  );
  let app: FastifyInstance | undefined;
  try {
    await migrateDatabase(database);
    const given = env["VERBATIM_OPERATOR_TOKEN"];
    const generatedToken = given === undefined || given === "";
    const operatorToken = generatedToken ? `vop_${randomBytes(24).toString("base64url")}` : given;
    app = await buildServer({
      database,
      operatorToken,
      ...settings,
      webRoot: defaultWebRoot(),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    const host = options.host ?? DEFAULT_HOST;
    await app.listen({ host, port: options.port ?? DEFAULT_PORT });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : options.port;
    const shownHost = host.includes(":") ? `[${host}]` : host;
    const running = app;
    let closing: Promise<void> | undefined;
    return {
      app,
      database,
      url: `http://${shownHost}:${port}`,
      operatorToken,
      generatedToken,
      close: () => {
        closing ??= (async () => {
          // Stops accepting, waits for every handler, then drops connections left open by
          // clients that never closed them (nothing runs on them any more).
          await running.close();
          running.server.closeAllConnections();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}
