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
  options: TransactionOptions = {},
): Promise<T> {
  return database.db.connection().execute(async (connection) => {
    const lazy = options.waitForDisk === false && database.capabilities.dialect === "sqlite";
    if (lazy) await sql`pragma synchronous = NORMAL`.execute(connection);
    try {
      // PostgreSQL: both in one round trip (a query without parameters may hold two
      // statements); each round trip is a socket write and a wake-up of the server process.
      const lazyCommit =
        options.waitForDisk === false && database.capabilities.dialect === "postgres"
          ? "; set local synchronous_commit = off"
          : "";
      await sql.raw(`${database.capabilities.beginStatement}${lazyCommit}`).execute(connection);
      let result: T;
      try {
        result = await work(connection);
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
      await sql`commit`.execute(connection);
      return result;
    } finally {
      if (lazy) await sql`pragma synchronous = FULL`.execute(connection);
    }
  });
}

export interface TransactionOptions {
  /**
   * false: the commit does not wait for the disk (SQLite `synchronous=NORMAL` for this commit,
   * PostgreSQL `synchronous_commit = off`), for writes that can be made again from what is
   * durable already (a recorded call's place in its chain). The commit is still atomic, and
   * it is on disk at the next durable commit of the database or within a moment; a power loss
   * before that loses it whole, never half of it.
   */
  readonly waitForDisk?: boolean;
}
