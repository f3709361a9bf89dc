import type { FastifyInstance } from "fastify";
import { BackgroundAgentJobs, type GatewayMessageStore } from "../../gateway/index.js";
import { registerJobCallerRoutes } from "../jobs/caller-routes.js";
import type { StoreDatabase } from "../../store/index.js";
import { ResponsesService } from "../responses/service.js";
import { NO_UPSTREAM, type UpstreamConfig } from "../upstream/config.js";
import { registerCompressRoute } from "./compress.js";
import { registerResponseRoutes } from "./responses.js";

export interface CallerRouteOptions {
  readonly database: StoreDatabase;
  readonly upstream: UpstreamConfig | undefined;
  readonly store: GatewayMessageStore;
}

/** Caller routes (/v1): responses, compression, jobs; under per-subject API keys. */
export function registerCallerRoutes(app: FastifyInstance, options: CallerRouteOptions): void {
  const { store } = options;
  registerResponseRoutes(app, new ResponsesService(store, options.upstream ?? NO_UPSTREAM));
  registerCompressRoute(app, store, options.upstream);
  registerJobCallerRoutes(app, new BackgroundAgentJobs(options.database), store);
}
