import type { ErrorCodeDefinition } from "verbatim-llm/core";
import { registerErrorCodes } from "verbatim-llm/internal";

/**
 * The error codes the store layer raises (docs/errors.md, group "store"). Add a code here, then
 * run `npm run docs:generate`. Importing this module registers them (the entry point does).
 */
export const storeCodes = [
  {
    code: "store_location_invalid",
    httpStatus: 400,
    meaning:
      "The database location is neither a SQLite file path nor a postgres:// URL, or names an invalid schema.",
    remedy: "Pass a SQLite file path or a postgres://user@host:port/database URL.",
  },
  {
    code: "store_unreachable",
    httpStatus: 503,
    meaning:
      "The database cannot be opened: the SQLite file or its folder is not writable, or PostgreSQL refuses the connection.",
    remedy:
      "Check the path and its permissions, or that PostgreSQL runs and the URL and its access rules are right.",
  },
  {
    code: "store_migration_failed",
    httpStatus: 500,
    meaning: "A migration of the store failed; its transaction was rolled back.",
    remedy: "Read the message for the cause, fix it and run `verbatim db migrate` again.",
  },
  {
    code: "store_schema_newer",
    httpStatus: 500,
    meaning:
      "The database holds a migration this version of verbatim does not know: it was written by a newer version.",
    remedy: "Upgrade verbatim to the version that wrote the database.",
  },
  {
    code: "store_partitions_invalid",
    httpStatus: 400,
    meaning:
      "The partitions asked for cannot be made: not a whole number from 2 to 1024, a SQLite store, or tables split into another number of partitions already.",
    remedy:
      "Pass --partitions with the number the tables have (or a new one on a new PostgreSQL database); leave it out for SQLite.",
  },
] as const satisfies readonly ErrorCodeDefinition[];

declare module "verbatim-llm/core" {
  interface ErrorCodeGroups {
    readonly store: typeof storeCodes;
  }
}

registerErrorCodes("store", storeCodes);
