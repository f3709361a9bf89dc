import type { FastifyInstance } from "fastify";
import { BackgroundAgentJobs } from "../../gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../gateway/message-store.js";
import type { StoreDatabase } from "../../store/database.js";
import { registerConversationConsoleRoutes } from "../console/conversations.js";
import { registerJobConsoleRoutes } from "../console/jobs.js";

/** Operator console routes (B14), under the operator token. */
export function registerConsoleRoutes(app: FastifyInstance, database: StoreDatabase): void {
  registerConversationConsoleRoutes(app, database, new GatewayMessageStore(database));
  registerJobConsoleRoutes(app, database, new BackgroundAgentJobs(database));
}
