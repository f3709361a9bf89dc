// The store layer's error codes, registered in verbatim-llm/core when this entry point loads.
import "./error-codes.js";
export { openDatabase } from "./database.js";
export type { OpenDatabaseOptions, StoreDatabase } from "./database.js";
export { describeLocation, parseDatabaseLocation } from "./location.js";
export type { DatabaseLocation } from "./location.js";
export { appliedMigrations, migrateDatabase } from "./migrate.js";
export type { MigrationReport } from "./migrate.js";
export type {
  GatewayBranchTable,
  GatewayConversationTable,
  GatewayIdempotencyKeyTable,
  GatewayMessageTable,
  MigrationTable,
  StoreSchema,
} from "./schema.js";
export type {
  BackgroundAgentJobTable,
  BackgroundAgentJobTurnItemTable,
  BackgroundAgentJobTurnTable,
  BackgroundAgentJobWakeEventTable,
} from "./job-schema.js";
