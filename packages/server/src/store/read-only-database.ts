import { sql } from "kysely";
import { openDatabase, type OpenDatabaseOptions, type StoreDatabase } from "./database.js";
import { checkSchemaName, type DatabaseLocation } from "./location.js";

/**
 * Whether another thread or process can open the same store from its location: a SQLite file
 * can, an in-memory SQLite database (`:memory:`, or the empty path of a temporary one) cannot.
 */
export function canReopen(location: DatabaseLocation): boolean {
  if (location.dialect === "postgres") return true;
  return location.path !== "" && location.path !== ":memory:" && !location.path.startsWith("file:");
}

/**
 * A PostgreSQL URL whose connections start every transaction read-only (and work in `schema`,
 * when given): the `options` startup parameter, added to any the URL already has.
 */
function readOnlyUrl(url: string, schema: string | undefined): string {
  const parsed = new URL(url);
  const given = parsed.searchParams.get("options");
  const settings = [
    ...(given === null || given === "" ? [] : [given]),
    ...(schema === undefined ? [] : [`-c search_path=${checkSchemaName(schema)}`]),
    "-c default_transaction_read_only=on",
  ];
  parsed.searchParams.set("options", settings.join(" "));
  return parsed.toString();
}

/**
 * Opens a store another connection already opened and migrated, for reads only: SQLite with
 * `query_only` on (a write fails; it never migrates), PostgreSQL with every transaction
 * read-only (not behind a pooler in transaction mode, where startup options cannot pass: there
 * it opens a plain pool). SQLite in WAL mode: each read sees the last commit made before it started.
 */
export async function openReadOnlyDatabase(
  location: DatabaseLocation,
  options: OpenDatabaseOptions = {},
): Promise<StoreDatabase> {
  if (location.dialect === "postgres") {
    // Behind a pooler in transaction mode no startup option passes: reads on plain connections.
    if (options.pooler === "transaction") return openDatabase(location, options);
    const database = await openDatabase(
      { dialect: "postgres", url: readOnlyUrl(location.url, location.schema) },
      options,
    );
    return { ...database, location };
  }
  const database = await openDatabase(location, options);
  try {
    await sql`pragma query_only = on`.execute(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
