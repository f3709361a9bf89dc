export { capabilitiesOf } from "./capabilities.js";
export type { DialectCapabilities } from "./capabilities.js";
export { openDatabase } from "./database.js";
export type { OpenDatabaseOptions, StoreDatabase } from "./database.js";
export { describeLocation, parseDatabaseLocation } from "./location.js";
export type { DatabaseLocation } from "./location.js";
export { appliedMigrations, migrateDatabase } from "./migrate.js";
export type { MigrationReport } from "./migrate.js";
export { storeMigrations } from "./migrations/index.js";
export type { Migration } from "./migrations/migration.js";
export type {
  GatewayBranchTable,
  GatewayConversationTable,
  GatewayIdempotencyKeyTable,
  GatewayMessageTable,
  MigrationTable,
  StoreSchema,
} from "./schema.js";
export { inTransaction } from "./transaction.js";
export { listenForChanges } from "./notifications.js";
export type { ChangeHandlers, ChangeListener } from "./notifications.js";
export { API_KEY_CHANGES_CHANNEL } from "./migrations/0004-api-key-notifications.js";
export type {
  BackgroundAgentJobTable,
  BackgroundAgentJobTurnItemTable,
  BackgroundAgentJobTurnTable,
  BackgroundAgentJobWakeEventTable,
} from "./job-schema.js";
