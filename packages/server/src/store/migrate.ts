import { sql, type Kysely } from "kysely";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "./database.js";
import { describeLocation } from "./location.js";
import { storeMigrations } from "./migrations/index.js";
import type { Migration } from "./migrations/migration.js";
import type { StoreSchema } from "./schema.js";

export interface MigrationReport {
  /** Migrations this call applied, in order. */
  readonly applied: readonly string[];
  /** Every migration the database holds now. */
  readonly current: readonly string[];
}

/**
 * Brings the database up to the newest migration. Each migration runs in its own transaction
 * and is recorded in `verbatim_migrations`. On PostgreSQL each of those transactions first
 * takes a transaction advisory lock (one per schema) and then reads what is applied, so several
 * servers starting at once migrate one after the other and the later ones find nothing to do.
 * A transaction lock, not a session one: behind a pooler in transaction mode (PgBouncer) a
 * session lock could be taken on one server connection and released on another, and stay. A database that holds a migration this code does
 * not know is newer than the code: refused with `store_schema_newer`, nothing changed. It does
 * not index the rows imports left for the search index (`catchUpSearchIndex`: `db migrate` and
 * `db index` do it at once, `verbatim serve` in the background).
 */
export async function migrateDatabase(
  database: StoreDatabase,
  migrations: readonly Migration[] = storeMigrations,
): Promise<MigrationReport> {
  try {
    return await database.db
      .connection()
      .execute((connection) => runPending(database, connection, migrations));
  } catch (error) {
    if (error instanceof VerbatimError) throw error;
    throw new VerbatimError(
      "store_migration_failed",
      `migrating the database failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        where: describeLocation(database.location),
        hint: "Nothing of the failed migration was kept; fix the cause and run it again",
        cause: error,
      },
    );
  }
}

async function runPending(
  database: StoreDatabase,
  connection: Kysely<StoreSchema>,
  migrations: readonly Migration[],
): Promise<MigrationReport> {
  const { advisoryLocks, beginStatement } = database.capabilities;
  // One round trip: the begin and, on PostgreSQL, the lock held until the commit.
  const begin = sql.raw(
    advisoryLocks
      ? `${beginStatement}; select pg_advisory_xact_lock(hashtext('verbatim.migrate:' || current_schema()))`
      : beginStatement,
  );
  await begin.execute(connection);
  try {
    await connection.schema
      .createTable("verbatim_migrations")
      .ifNotExists()
      .addColumn("name", "text", (column) => column.primaryKey())
      .addColumn("applied_at", "text", (column) => column.notNull())
      .execute();
    await sql`commit`.execute(connection);
  } catch (error) {
    await sql`rollback`.execute(connection).catch(() => undefined);
    throw error;
  }
  const applied: string[] = [];
  const sqlite = database.capabilities.dialect === "sqlite";
  // SQLite reads the pragma only outside a transaction: turned off before the BEGIN of a
  // migration that makes tables again, on again once it is committed or rolled back.
  let foreignKeysOff = false;
  try {
    for (;;) {
      await begin.execute(connection);
      try {
        const done = await appliedNames(connection);
        checkKnown(database, done, migrations);
        const next = migrations[done.length];
        if (next === undefined) {
          await sql`commit`.execute(connection);
          return { applied, current: done };
        }
        if (sqlite && next.rebuildsTables === true && !foreignKeysOff) {
          await sql`rollback`.execute(connection);
          await sql`pragma foreign_keys = off`.execute(connection);
          foreignKeysOff = true;
          continue;
        }
        await next.up(connection as Kysely<unknown>, database.capabilities);
        if (foreignKeysOff) await checkForeignKeys(connection, next.name);
        await connection
          .insertInto("verbatim_migrations")
          .values({ name: next.name, applied_at: new Date().toISOString() })
          .execute();
        await sql`commit`.execute(connection);
        applied.push(next.name);
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
      if (foreignKeysOff) {
        await sql`pragma foreign_keys = on`.execute(connection);
        foreignKeysOff = false;
      }
    }
  } finally {
    if (foreignKeysOff) await sql`pragma foreign_keys = on`.execute(connection);
  }
}

/** SQLite: every foreign key holds after a migration that ran with them off. */
async function checkForeignKeys(connection: Kysely<StoreSchema>, migration: string): Promise<void> {
  const broken = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(
    connection,
  );
  const first = broken.rows[0];
  if (first === undefined) return;
  throw new VerbatimError(
    "store_migration_failed",
    `migration "${migration}" left ${broken.rows.length} row(s) of ${first.table} without their ${first.parent} row`,
    {
      hint: "Nothing of the migration was kept; report it with the database's schema (sqlite3 .schema)",
      details: { migration, table: first.table, parent: first.parent },
    },
  );
}

async function appliedNames(connection: Kysely<StoreSchema>): Promise<string[]> {
  const rows = await connection
    .selectFrom("verbatim_migrations")
    .select("name")
    .orderBy("name")
    .execute();
  return rows.map((row) => row.name);
}

/** The applied names must be the first migrations of the list, in order. */
function checkKnown(
  database: StoreDatabase,
  done: readonly string[],
  migrations: readonly Migration[],
): void {
  done.forEach((name, index) => {
    if (migrations[index]?.name === name) return;
    const known = migrations.some((migration) => migration.name === name);
    throw new VerbatimError(
      known ? "store_migration_failed" : "store_schema_newer",
      known
        ? `the database's migrations are out of order at "${name}"`
        : `the database holds migration "${name}", which this version of verbatim does not know`,
      {
        where: describeLocation(database.location),
        hint: known
          ? "The verbatim_migrations table was edited by hand; restore it from a backup"
          : "Upgrade verbatim to the version that wrote this database",
        details: { migration: name },
      },
    );
  });
}

/** The names of the migrations the database holds (empty when it was never migrated). */
export async function appliedMigrations(database: StoreDatabase): Promise<string[]> {
  const exists =
    database.capabilities.dialect === "postgres"
      ? await sql<{
          found: string | null;
        }>`select to_regclass('verbatim_migrations')::text as found`
          .execute(database.db)
          .then((result) => result.rows[0]?.found != null)
      : await sql<{
          found: string;
        }>`select name as found from sqlite_master where type = 'table' and name = 'verbatim_migrations'`
          .execute(database.db)
          .then((result) => result.rows.length > 0);
  return exists ? appliedNames(database.db) : [];
}
