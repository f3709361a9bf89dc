import { sql, type Kysely } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect } from "../../../../test/support/databases.js";
import type { StoreSchema } from "./schema.js";
import { inTransaction } from "./transaction.js";

/**
 * Issue 18: a transaction whose commit need not wait for the disk (a recorded call's place in
 * its chain, made again from its durable row after a power loss) sets that for its own commit
 * only; every other commit stays durable, after a failed transaction too.
 */
describeEachDialect("transactions that do not wait for the disk", (getDatabase, dialect) => {
  /** SQLite: synchronous (2 FULL, 1 NORMAL); PostgreSQL: synchronous_commit (on, off). */
  async function setting(db: Kysely<StoreSchema>): Promise<string> {
    if (dialect === "sqlite") {
      const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
      return String(rows[0]?.synchronous);
    }
    const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(db);
    return String(rows[0]?.synchronous_commit);
  }
  const durable = dialect === "sqlite" ? "2" : "on";
  const lazy = dialect === "sqlite" ? "1" : "off";

  it("applies to its own commit only, and durability comes back after it, even when it fails", async () => {
    const database = getDatabase();
    expect(await inTransaction(database, setting, { waitForDisk: false })).toBe(lazy);
    expect(await inTransaction(database, setting)).toBe(durable);
    await expect(
      inTransaction(
        database,
        async () => {
          throw new Error("failed inside");
        },
        { waitForDisk: false },
      ),
    ).rejects.toThrow("failed inside");
    expect(await inTransaction(database, setting)).toBe(durable);
    expect(await setting(database.db)).toBe(durable);
  });
});
