import type { FastifyInstance } from "fastify";
import { GatewayMessageStore } from "../../gateway/message-store.js";
import type { StoreDatabase } from "../../store/database.js";
import { registerConversationConsoleRoutes } from "../console/conversations.js";

/** Operator console routes (B14), under the operator token. */
export function registerConsoleRoutes(app: FastifyInstance, database: StoreDatabase): void {
  registerConversationConsoleRoutes(app, database, new GatewayMessageStore(database));
}
