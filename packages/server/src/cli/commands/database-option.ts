import { VerbatimError } from "verbatim-llm/core";
import { usageError, type Command } from "verbatim-llm/internal";
import { parseDatabaseLocation, type DatabaseLocation } from "../../store/location.js";

/** A command's `--db` as a location: a usage error when it is missing or not a location. */
export function databaseOption(command: Command, text: string | undefined): DatabaseLocation {
  if (text === undefined) throw usageError(command, "--db is required");
  try {
    return parseDatabaseLocation(text);
  } catch (error) {
    throw usageError(command, error instanceof VerbatimError ? error.describe() : String(error));
  }
}
