import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { VerbatimError } from "verbatim-llm/core";
import {
  describeEachDialect,
  freshDatabase,
  postgresUrl,
  testDialects,
} from "../../../../test/support/databases.js";
import { appliedMigrations, migrateDatabase } from "./migrate.js";
import { storeMigrations } from "./migrations/index.js";
import type { Migration } from "./migrations/migration.js";

describeEachDialect("store migrations", (getDatabase) => {
  it("B3 creates ai_gateway_messages with the columns of B3", async () => {
    const columns = [
      "id",
      "created_at",
      "subject_uid",
      "conversation_id",
      "type",
      "role",
      "status",
      "previous_message_id",
      "content",
      "metadata",
    ];
    // Fails with "no such column" when one is missing.
    const result = await sql
      .raw(`select ${columns.join(", ")} from ai_gateway_messages where 1 = 0`)
      .execute(getDatabase().db);
    expect(result.rows).toEqual([]);
    await expect(
      sql.raw("select no_such_column from ai_gateway_messages").execute(getDatabase().db),
    ).rejects.toThrow();
  });

  it("records every migration once and a second run applies nothing", async () => {
    const database = getDatabase();
    expect(await appliedMigrations(database)).toEqual(storeMigrations.map((m) => m.name));
    const again = await migrateDatabase(database);
    expect(again.applied).toEqual([]);
    expect(again.current).toEqual(storeMigrations.map((m) => m.name));
  });

  it("refuses a database that holds a migration this code does not know", async () => {
    const database = getDatabase();
    await database.db
      .insertInto("verbatim_migrations")
      .values({ name: "9999-from-the-future", applied_at: new Date().toISOString() })
      .execute();
    try {
      const error = await migrateDatabase(database).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VerbatimError);
      expect((error as VerbatimError).code).toBe("store_schema_newer");
      expect((error as VerbatimError).message).toContain("9999-from-the-future");
    } finally {
      await database.db
        .deleteFrom("verbatim_migrations")
        .where("name", "=", "9999-from-the-future")
        .execute();
    }
  });
});

describe("a failing migration", () => {
  for (const dialect of testDialects) {
    it.skipIf(dialect === "postgres" && postgresUrl === undefined)(
      `rolls back everything it did [${dialect}]`,
      async () => {
        const fresh = await freshDatabase(dialect, { migrate: false });
        try {
          const broken: Migration = {
            name: "0002-broken",
            async up(db) {
              await db.schema.createTable("half_done").addColumn("x", "integer").execute();
              await sql`select * from no_such_table`.execute(db);
            },
          };
          const error = await migrateDatabase(fresh.database, [...storeMigrations, broken]).catch(
            (caught: unknown) => caught,
          );
          expect((error as VerbatimError).code).toBe("store_migration_failed");
          expect(await appliedMigrations(fresh.database)).toEqual(
            storeMigrations.map((m) => m.name),
          );
          const half = await sql`select count(*) as n from half_done`
            .execute(fresh.database.db)
            .then(() => "exists")
            .catch(() => "absent");
          expect(half).toBe("absent");
        } finally {
          await fresh.cleanup();
        }
      },
    );
  }
});
