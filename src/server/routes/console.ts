import type { FastifyInstance } from "fastify";
import type { StoreDatabase } from "../../store/database.js";

/** Operator console routes (B14), under the operator token. */
export function registerConsoleRoutes(_app: FastifyInstance, _database: StoreDatabase): void {}
