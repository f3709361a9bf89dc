import { existsSync } from "node:fs";
import { resolve } from "node:path";
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

/** `--db` as a location: a usage error when missing or invalid; a SQLite file must exist. */
export function existingStore(
  command: Command,
  text: string | undefined,
  cwd: string,
): DatabaseLocation {
  const location = databaseOption(command, text);
  if (location.dialect === "postgres" || location.path === ":memory:") return location;
  const path = resolve(cwd, location.path);
  if (!existsSync(path))
    throw new VerbatimError("path_not_found", `${location.path} does not exist`, {
      where: path,
      hint: "Give the SQLite file an import wrote into (--into sqlite:<file>)",
    });
  return { dialect: "sqlite", path };
}
