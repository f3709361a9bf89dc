import { VerbatimError } from "verbatim-llm/core";

/** Where the store lives: a SQLite file (the embedded default) or a PostgreSQL database. */
export type DatabaseLocation =
  | { readonly dialect: "sqlite"; readonly path: string }
  | {
      readonly dialect: "postgres";
      readonly url: string;
      /** A schema to work in (sets `search_path`); the URL's default otherwise. */
      readonly schema?: string;
    };

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads `--db` text: a `postgres://` or `postgresql://` URL is PostgreSQL, anything else is the
 * path of a SQLite file. `:memory:` is an in-memory SQLite database (tests only).
 */
export function parseDatabaseLocation(text: string): DatabaseLocation {
  const trimmed = text.trim();
  if (trimmed === "") {
    throw new VerbatimError("store_location_invalid", "the database location is empty", {
      hint: "Pass a SQLite file path or a postgres://user@host:port/database URL",
    });
  }
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    try {
      new URL(trimmed);
    } catch {
      throw new VerbatimError("store_location_invalid", "the PostgreSQL URL cannot be parsed", {
        where: redactUrl(trimmed),
        hint: "Write it as postgres://user[:password]@host[:port]/database",
      });
    }
    return { dialect: "postgres", url: trimmed };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw new VerbatimError("store_location_invalid", "unknown database URL scheme", {
      where: redactUrl(trimmed),
      hint: "Use postgres://… for PostgreSQL, or a file path for SQLite",
    });
  }
  return { dialect: "sqlite", path: text };
}

/** Checks a PostgreSQL schema name (lowercase letters, digits, underscores). */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new VerbatimError(
      "store_location_invalid",
      `invalid PostgreSQL schema name "${schema}"`,
      {
        hint: "Use lowercase letters, digits and underscores, starting with a letter or underscore",
      },
    );
  }
  return schema;
}

/** A location for messages and logs: a PostgreSQL URL without its password. */
export function describeLocation(location: DatabaseLocation): string {
  if (location.dialect === "sqlite") return location.path;
  const url = redactUrl(location.url);
  return location.schema === undefined ? url : `${url} (schema ${location.schema})`;
}

function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return text.replace(/:[^:@/]*@/, ":***@");
  }
}
