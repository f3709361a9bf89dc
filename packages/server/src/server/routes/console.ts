import type { FastifyInstance } from "fastify";
import type { GatewayMessageStore } from "../../gateway/index.js";
import type { StoreDatabase } from "../../store/index.js";
import { registerConversationCacheRoute } from "../console/conversation-cache.js";
import { registerConversationConsoleRoutes } from "../console/conversations.js";
import { registerImageConsoleRoute } from "../console/images.js";
import { registerJobConsoleRoutes } from "../console/jobs.js";
import { registerSearchConsoleRoutes } from "../console/search.js";
import type { ConsolePages } from "../console/worker/pages.js";

/**
 * Operator console routes (B14), under the operator token. The message and job pages are built
 * by `pages` (in the console's worker thread when there is one).
 */
export function registerConsoleRoutes(
  app: FastifyInstance,
  database: StoreDatabase,
  store: GatewayMessageStore,
  pages: ConsolePages,
): void {
  registerConversationConsoleRoutes(app, database, pages);
  registerJobConsoleRoutes(app, database, pages);
  registerSearchConsoleRoutes(app, database);
  registerConversationCacheRoute(app, database);
  registerImageConsoleRoute(app, database, store);
}
