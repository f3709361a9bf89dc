import type { FastifyInstance } from "fastify";
import type { StoreDatabase } from "../../store/database.js";
import type { UpstreamConfig } from "../upstream/config.js";

export interface CallerRouteOptions {
  readonly database: StoreDatabase;
  readonly upstream: UpstreamConfig | undefined;
}

/** Caller routes (/v1): responses, compression, jobs; under per-subject API keys. */
export function registerCallerRoutes(_app: FastifyInstance, _options: CallerRouteOptions): void {}
