import type { FastifyInstance } from "fastify";
import { BackgroundAgentJobs, type GatewayMessageStore } from "../../gateway/index.js";
import type { StoreDatabase } from "../../store/index.js";
import { registerConversationCacheRoute } from "../console/conversation-cache.js";
import { registerConversationConsoleRoutes } from "../console/conversations.js";
import { registerImageConsoleRoute } from "../console/images.js";
import { registerJobConsoleRoutes } from "../console/jobs.js";
import { registerSearchConsoleRoutes } from "../console/search.js";

/** Operator console routes (B14), under the operator token. */
export function registerConsoleRoutes(
  app: FastifyInstance,
  database: StoreDatabase,
  store: GatewayMessageStore,
): void {
  registerConversationConsoleRoutes(app, database, store);
  registerJobConsoleRoutes(app, database, new BackgroundAgentJobs(database));
  registerSearchConsoleRoutes(app, database);
  registerConversationCacheRoute(app, database);
  registerImageConsoleRoute(app, database, store);
}
