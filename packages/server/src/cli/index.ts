import type { Command, ServerCommandName } from "verbatim-llm/internal";

/**
 * The commands this package adds to `verbatim`, each loaded only when it runs. The library's
 * command line finds them here (verbatim-llm-server/cli).
 */
export const serverCommands: Readonly<Record<ServerCommandName, () => Promise<Command>>> = {
  serve: async () => (await import("./commands/serve.js")).serve,
  "keys create": async () => (await import("./commands/keys.js")).keysCreate,
  "keys revoke": async () => (await import("./commands/keys.js")).keysRevoke,
  "db migrate": async () => (await import("./commands/db-migrate.js")).dbMigrate,
  "db index": async () => (await import("./commands/db-index.js")).dbIndex,
  "db prune": async () => (await import("./commands/db-prune.js")).dbPrune,
  "db delete-subject": async () => (await import("./commands/db-prune.js")).dbDeleteSubject,
  "import database": async () => (await import("./commands/import-database.js")).importDatabase,
  "export database": async () => (await import("./commands/export-database.js")).exportDatabase,
  "cache-report": async () => (await import("./commands/cache-report.js")).cacheReport,
};
