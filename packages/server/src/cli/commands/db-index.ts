import { EXIT_OK, parseCommandArgs, type Command } from "verbatim-llm/internal";
import { openDatabase } from "../../store/database.js";
import { describeLocation } from "../../store/location.js";
import { existingStore } from "./database-option.js";
import { indexDeferredRows } from "../../gateway/maintenance/store-upgrade.js";
import { openOptionsFromEnv } from "../../server/connection-budget.js";

/**
 * `verbatim db index --db <store>`: indexes now, for the console's search, the rows imports into
 * a SQLite store left for later (gateway/maintenance/store-upgrade.ts), which `verbatim serve` otherwise
 * does in the background; search finds them either way. A running import's rows are left to it.
 * PostgreSQL has no such index: nothing to do.
 */
export const dbIndex: Command = {
  words: ["db", "index"],
  usage: "--db <sqlite path | postgres url> [--json]",
  summary:
    "Index now, for the console's search, the rows imports left for later (a running server does it in the background).",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      { db: { type: "string" }, json: { type: "boolean" } },
      { min: 0, max: 0 },
    );
    const location = existingStore(this, values.db, io.cwd);
    const database = await openDatabase(location, { poolSize: 1, ...openOptionsFromEnv(io.env) });
    try {
      const { report, running } = await indexDeferredRows(database);
      const where = describeLocation(location);
      if (values.json === true) {
        io.stdout(
          `${JSON.stringify({
            database: where,
            dialect: location.dialect,
            indexedRows: report.rows,
            deferralsEnded: report.deferrals,
            deferralsLeft: running,
          })}\n`,
        );
      } else if (location.dialect !== "sqlite") {
        io.stdout(`${where}: nothing to index (PostgreSQL searches the tables themselves)\n`);
      } else {
        io.stdout(
          `${where}: indexed ${report.rows} row(s) for search` +
            (running > 0
              ? `; ${running} left to imports still running\n`
              : "; search index up to date\n"),
        );
      }
      return EXIT_OK;
    } finally {
      await database.close();
    }
  },
};
