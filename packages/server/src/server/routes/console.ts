import type { FastifyInstance } from "fastify";
import type { ConsoleService } from "../../gateway/console/service.js";
import { registerConversationCacheRoute } from "../console/conversation-cache.js";
import { registerConversationConsoleRoutes } from "../console/conversations.js";
import { registerImageConsoleRoute } from "../console/images.js";
import { registerJobConsoleRoutes } from "../console/jobs.js";
import { registerRecordedCallRoutes } from "../console/recorded-calls.js";
import { registerSearchConsoleRoutes } from "../console/search.js";

/**
 * Operator console routes (B14), under the operator token. Each parses the request, calls one
 * method of the console service (gateway/console/service.ts) and writes its answer; the message
 * and job pages are built by the service (in the console's worker thread when there is one).
 */
export function registerConsoleRoutes(app: FastifyInstance, service: ConsoleService): void {
  registerConversationConsoleRoutes(app, service);
  registerJobConsoleRoutes(app, service);
  registerSearchConsoleRoutes(app, service);
  registerConversationCacheRoute(app, service);
  registerImageConsoleRoute(app, service);
  registerRecordedCallRoutes(app, service);
}
