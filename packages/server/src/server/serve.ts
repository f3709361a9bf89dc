import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { openDatabase, type OpenDatabaseOptions, type StoreDatabase } from "../store/database.js";
import { parseDatabaseLocation, type DatabaseLocation } from "../store/location.js";
import { migrateDatabase } from "../store/migrate.js";
import { partitionBySubject, partitionLine } from "../store/partitions.js";
import { backfillLine, backfillRecordedHistory } from "../gateway/recording/backfill.js";
import { retentionLine } from "../gateway/maintenance/retention.js";
import { RollingRetention } from "../gateway/maintenance/rolling-retention.js";
import { keepSearchIndexCaughtUp } from "../gateway/maintenance/search-index-upkeep.js";
import { prepareConsolePage } from "./console-page.js";
import { openOptionsFromEnv, postgresSettingsFromEnv } from "./connection-budget.js";
import { redisLimitsFromEnv, redisUrlFromEnv } from "./shared-limits.js";
import { recordCompressionFromEnv, switchFromEnv, wholeNumberFromEnv } from "./env.js";
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
  /** Where a line for the operator goes, e.g. that the console page is being built (stderr). */
  readonly say?: (line: string) => void;
}

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly database: StoreDatabase;
  readonly url: string;
  readonly operatorToken: string;
  /** Whether the token was generated (not from VERBATIM_OPERATOR_TOKEN). */
  readonly generatedToken: boolean;
  /** Why there is no console page at `/` (it answers with how to build it); undefined when served. */
  readonly consolePageMissing: string | undefined;
  /** Stops accepting, finishes in-flight requests, then closes the database. */
  close(): Promise<void>;
}

export const DEFAULT_DATABASE = "./.verbatim/verbatim.sqlite";
export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = "127.0.0.1";
/** A subject's recorded bytes are packed once it has recorded nothing for this long. */
export const DEFAULT_RECORD_PACK_AFTER_MS = 30_000;

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
 * prepared statements off (`VERBATIM_PG_PREPARED_STATEMENTS=off`) or say it goes through a
 * pooler in transaction mode (`VERBATIM_PG_POOLER=transaction`; server/connection-budget.ts).
 */
export async function openStore(
  text: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = {},
  extra: Pick<OpenDatabaseOptions, "checkpointThread" | "onCheckpointError" | "poolSize"> = {},
): Promise<StoreDatabase> {
  let location: DatabaseLocation = parseDatabaseLocation(text);
  if (location.dialect === "sqlite" && location.path !== ":memory:") {
    location = { dialect: "sqlite", path: resolve(cwd, location.path) };
    mkdirSync(dirname(location.path), { recursive: true });
  }
  return openDatabase(location, { ...openOptionsFromEnv(env), ...extra });
}

/**
 * `verbatim serve`: open and migrate the database, then listen; then index, in the background,
 * the rows imports left for the search index (gateway/maintenance/search-index-upkeep.ts).
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  // Settings from the environment first: a typo stops the start before the database is touched.
  const trustedProxies = trustedProxiesFromEnv(env);
  const retentionDays = wholeNumberFromEnv(env, "VERBATIM_RETENTION_DAYS") ?? 0;
  const partitions = wholeNumberFromEnv(env, "VERBATIM_PG_PARTITIONS");
  const postgres = postgresSettingsFromEnv(env);
  redisUrlFromEnv(env);
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
    apiKeyCache: postgres.apiKeyCache,
    recordRedact: switchFromEnv(env, "VERBATIM_RECORD_REDACT") ?? false,
    recordCompression: recordCompressionFromEnv(env),
  };
  const recordPackAfterMs = wholeNumberFromEnv(env, "VERBATIM_RECORD_PACK_AFTER_MS");
  const consolePage = await prepareConsolePage(
    env,
    options.cwd ?? process.cwd(),
    options.say ?? (() => undefined),
  );
  const say = options.say ?? (() => undefined);
  // A commit that serves a request never runs a WAL checkpoint (store/sqlite-checkpoints.ts).
  const database = await openStore(
    options.database ?? DEFAULT_DATABASE,
    options.cwd ?? process.cwd(),
    env,
    {
      checkpointThread: true,
      onCheckpointError: (message) =>
        say(`WAL checkpoints are back on the server's thread: ${message}`),
      poolSize: postgres.connections.pool,
    },
  );
  // The console's worker thread opens the store as openStore does, within the budget.
  const consoleWorker =
    database.location.dialect === "postgres" && postgres.connections.consoleWorker === 0
      ? false
      : {
          preparedStatements: postgres.preparedStatements,
          poolSize: postgres.connections.consoleWorker,
          ...(postgres.pooler === undefined ? {} : { pooler: postgres.pooler }),
        };
  let app: FastifyInstance | undefined;
  // VERBATIM_REDIS_URL: the limits in Redis (closed with the app).
  const redisLimits = await redisLimitsFromEnv(env);
  try {
    await migrateDatabase(database);
    if (partitions !== undefined) {
      const { converted } = await partitionBySubject(database, partitions);
      if (converted.length > 0) say(partitionLine(converted.length, partitions));
    }
    // Conversations recorded before migration 0010 get their history written (once).
    const backfilled = await backfillRecordedHistory(database);
    if (backfilled.conversations > 0) {
      (options.say ?? (() => undefined))(backfillLine(backfilled));
    }
    const given = env["VERBATIM_OPERATOR_TOKEN"];
    const generatedToken = given === undefined || given === "";
    const operatorToken = generatedToken ? `vop_${randomBytes(24).toString("base64url")}` : given;
    app = await buildServer({
      database,
      operatorToken,
      ...settings,
      recordPackAfterMs: recordPackAfterMs ?? DEFAULT_RECORD_PACK_AFTER_MS,
      consoleWorker,
      ...(redisLimits === undefined ? {} : { sharedLimits: redisLimits }),
      webRoot:
        consolePage.root === false ? { missing: consolePage.missing ?? "" } : consolePage.root,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    const host = options.host ?? DEFAULT_HOST;
    await app.listen({ host, port: options.port ?? DEFAULT_PORT });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : options.port;
    const shownHost = host.includes(":") ? `[${host}]` : host;
    const running = app;
    // Rows imports left for the search index, indexed in small steps while the server answers
    // (search finds them meanwhile), and those of imports made while it runs.
    const searchCatchUp = keepSearchIndexCaughtUp(database);
    // What ended more than VERBATIM_RETENTION_DAYS ago goes, at start and hourly.
    const retention =
      retentionDays > 0
        ? new RollingRetention(database, {
            days: retentionDays,
            onReport: (report) => running.log.info({ retention: report }, retentionLine(report)),
            onError: (error) => running.log.error({ err: error }, "the rolling retention failed"),
          })
        : undefined;
    retention?.start();
    let closing: Promise<void> | undefined;
    return {
      app,
      database,
      url: `http://${shownHost}:${port}`,
      operatorToken,
      generatedToken,
      consolePageMissing: consolePage.root === false ? consolePage.missing : undefined,
      close: () => {
        closing ??= (async () => {
          // Stops accepting, waits for every handler, then drops connections left open by
          // clients that never closed them (nothing runs on them any more).
          await running.close();
          running.server.closeAllConnections();
          await searchCatchUp.stop();
          await retention?.stop();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    if (app === undefined) await redisLimits?.close();
    await app?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}
