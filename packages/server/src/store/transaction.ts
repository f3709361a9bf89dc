import { sql, type Kysely } from "kysely";
import type { StoreDatabase } from "./database.js";
import type { StoreSchema } from "./schema.js";

/**
 * Runs `work` in one write transaction on one connection and commits, or rolls back and
 * rethrows. SQLite begins with `BEGIN IMMEDIATE` (the write lock up front), PostgreSQL with
 * `BEGIN` (READ COMMITTED; writers that must not interleave lock rows).
 */
export async function inTransaction<T>(
  database: StoreDatabase,
  work: (transaction: Kysely<StoreSchema>) => Promise<T>,
): Promise<T> {
  return database.db.connection().execute(async (connection) => {
    await sql.raw(database.capabilities.beginStatement).execute(connection);
    let result: T;
    try {
      result = await work(connection);
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
    await sql`commit`.execute(connection);
    return result;
  });
}
