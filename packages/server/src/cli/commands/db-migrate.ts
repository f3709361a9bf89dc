import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { VerbatimError } from "verbatim-llm/core";
import { openDatabase } from "../../store/database.js";
import { describeLocation, type DatabaseLocation } from "../../store/location.js";
import { databaseOption } from "./database-option.js";
import { upgradeStore } from "../../gateway/maintenance/store-upgrade.js";
import { backfillLine } from "../../gateway/recording/backfill.js";
import { conversionLine } from "../../gateway/recording/bodies/convert.js";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "verbatim-llm/internal";
import { openOptionsFromEnv } from "../../server/connection-budget.js";
import { MAX_PARTITIONS, partitionBySubject, partitionLine } from "../../store/partitions.js";

/** `--partitions N`: checked before the database is opened. */
function partitionsOption(
  command: Command,
  text: string | undefined,
  dialect: DatabaseLocation["dialect"],
): number | undefined {
  if (text === undefined) return undefined;
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 2 || count > MAX_PARTITIONS) {
    throw usageError(
      command,
      `--partitions must be a whole number from 2 to ${MAX_PARTITIONS}, not "${text}"`,
    );
  }
  if (dialect !== "postgres") {
    throw usageError(
      command,
      "--partitions needs a PostgreSQL database (a SQLite store is one file: leave it out)",
    );
  }
  return count;
}

export const dbMigrate: Command = {
  words: ["db", "migrate"],
  usage: "--db <sqlite path | postgres url> [--partitions N] [--json]",
  summary:
    "Create or upgrade the gateway store's tables (SQLite file or PostgreSQL database); --partitions N hash-partitions PostgreSQL's subject-owned tables by subject.",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      { db: { type: "string" }, partitions: { type: "string" }, json: { type: "boolean" } },
      { min: 0, max: 0 },
    );
    let location = databaseOption(this, values.db);
    const partitions = partitionsOption(this, values.partitions, location.dialect);
    if (location.dialect === "sqlite") {
      const path = location.path === ":memory:" ? location.path : resolve(io.cwd, location.path);
      const folder = dirname(path);
      if (path !== ":memory:" && !(existsSync(folder) && statSync(folder).isDirectory())) {
        throw new VerbatimError("path_not_found", `the folder of ${location.path} does not exist`, {
          where: folder,
          hint: "Create the folder first; the SQLite file itself is created when missing",
        });
      }
      location = { dialect: "sqlite", path };
    }
    const database = await openDatabase(location, { poolSize: 1, ...openOptionsFromEnv(io.env) });
    try {
      const {
        migration: report,
        backfilled,
        converted,
      } = await upgradeStore(database, {
        // On a terminal, how far a long conversion is, on one line.
        onConversionBatch: (done) => {
          if (io.stderrIsTTY === true) io.stderr(`\r${conversionLine(done)}…`);
        },
      });
      if (io.stderrIsTTY === true && converted.calls > 0) io.stderr("\n");
      const partitioned =
        partitions === undefined ? undefined : await partitionBySubject(database, partitions);
      const where = describeLocation(location);
      if (values.json === true) {
        io.stdout(
          JSON.stringify({
            database: where,
            dialect: location.dialect,
            applied: report.applied,
            current: report.current,
            ...(partitioned === undefined
              ? {}
              : { partitions: partitioned.partitions, partitioned: partitioned.converted }),
          }) + "\n",
        );
      } else if (report.applied.length === 0) {
        io.stdout(`${where}: up to date (${report.current.length} migrations)\n`);
      } else {
        io.stdout(
          `${where}: applied ${report.applied.length} migration(s): ${report.applied.join(", ")}\n`,
        );
      }
      if (values.json !== true && backfilled.conversations > 0) {
        io.stdout(`${where}: ${backfillLine(backfilled)}\n`);
      }
      if (values.json !== true && converted.calls > 0) {
        io.stdout(`${where}: ${conversionLine(converted)}\n`);
      }
      if (values.json !== true && partitioned !== undefined) {
        io.stdout(
          partitioned.converted.length > 0
            ? `${where}: ${partitionLine(partitioned.converted.length, partitioned.partitions)}\n`
            : `${where}: subject-owned tables already in ${partitioned.partitions} partitions each\n`,
        );
      }
      return EXIT_OK;
    } finally {
      await database.close();
    }
  },
};
