import { expect, it } from "vitest";
import { sql } from "kysely";
import { deferDurability } from "../../packages/server/src/store/deferred-durability.js";
import { describeEachDialect } from "../support/databases.js";

describeEachDialect("deferDurability (imports into a database)", (getDatabase, dialect) => {
  it("SQLite commits without an fsync each until finish, then every commit is durable again; PostgreSQL is left as it is", async () => {
    const database = getDatabase();
    const setting = async (): Promise<string> =>
      dialect === "sqlite"
        ? String(
            (await sql<{ synchronous: number }>`pragma synchronous`.execute(database.db)).rows[0]
              ?.synchronous,
          )
        : String(
            (
              await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(
                database.db,
              )
            ).rows[0]?.synchronous_commit,
          );
    const before = await setting();
    const durability = await deferDurability(database);
    expect(await setting()).toBe(dialect === "sqlite" ? "1" : before);
    await durability.finish();
    expect(await setting()).toBe(dialect === "sqlite" ? "2" : before);
  });
});
