import type { KyselyPlugin } from "kysely";
import { describe, expect, it } from "vitest";
import { describeEachDialect } from "../../../../test/support/databases.js";
import { queryTemplate } from "./query-template.js";
import { inTransaction } from "./transaction.js";

const insertKey = queryTemplate<[string, string, string], never>((db, slot) =>
  db.insertInto("verbatim_api_keys").values({
    key_sha256: slot(0),
    subject_uid: slot(1),
    key_prefix: "vbk_test",
    created_at: slot(2),
    revoked_at: null,
  }),
);

// Slots used out of order and twice, beside a constant the template holds.
const findKeys = queryTemplate<
  [string, string],
  { readonly key_sha256: string; readonly key_prefix: string }
>((db, slot) =>
  db
    .selectFrom("verbatim_api_keys")
    .select(["key_sha256", "key_prefix"])
    .where("subject_uid", "=", slot(1))
    .where((eb) => eb.or([eb("key_sha256", "=", slot(0)), eb("key_sha256", "<", slot(0))]))
    .where("key_prefix", "=", "vbk_test")
    .orderBy("key_sha256"),
);

describeEachDialect("query templates", (getDatabase) => {
  it("runs the query Kysely wrote with each run's values, also inside a transaction", async () => {
    const { db } = getDatabase();
    const created = "2026-11-30T00:00:00.000Z";
    await insertKey.run(db, "b".repeat(64), "subject-1", created);
    await insertKey.run(db, "a".repeat(64), "subject-1", created);
    await insertKey.run(db, "c".repeat(64), "subject-2", created);
    const first = await findKeys.run(db, "b".repeat(64), "subject-1");
    expect(first.rows.map((row) => row.key_sha256)).toEqual(["a".repeat(64), "b".repeat(64)]);
    // The same template with other values: the result follows the values, not the first run.
    const second = await findKeys.run(db, "c".repeat(64), "subject-2");
    expect(second.rows.map((row) => row.key_sha256)).toEqual(["c".repeat(64)]);
    const inside = await inTransaction(getDatabase(), async (trx) => {
      await insertKey.run(trx, "d".repeat(64), "subject-2", created);
      return findKeys.run(trx, "d".repeat(64), "subject-2");
    });
    expect(inside.rows.map((row) => row.key_sha256)).toEqual(["c".repeat(64), "d".repeat(64)]);
  });

  it("counts the rows an update changed", async () => {
    const { db } = getDatabase();
    await insertKey.run(db, "e".repeat(64), "subject-3", "2026-11-30T00:00:00.000Z");
    const revoke = queryTemplate<[string, string], never>((builder, slot) =>
      builder
        .updateTable("verbatim_api_keys")
        .set({ revoked_at: slot(0) })
        .where("key_sha256", "=", slot(1)),
    );
    expect((await revoke.run(db, "now", "e".repeat(64))).numAffectedRows).toBe(1n);
    expect((await revoke.run(db, "now", "f".repeat(64))).numAffectedRows).toBe(0n);
  });
});

describeEachDialect("query templates refuse a wrong use", (getDatabase) => {
  it("a template that skips a slot, or gets the wrong number of values, is an error", async () => {
    const { db } = getDatabase();
    const skipping = queryTemplate<[string, string], never>((builder, slot) =>
      builder.selectFrom("verbatim_api_keys").selectAll().where("subject_uid", "=", slot(1)),
    );
    await expect(skipping.run(db, "x", "y")).rejects.toThrow("does not use slot 0");
    const one = queryTemplate<[string], never>((builder, slot) =>
      builder.selectFrom("verbatim_api_keys").selectAll().where("subject_uid", "=", slot(0)),
    );
    await expect(
      (one.run as (...values: unknown[]) => Promise<unknown>)(db, "x", "y"),
    ).rejects.toThrow("of 1 values got 2");
  });
});

describe("query templates", () => {
  it("are compiled once per database, not once per run", async () => {
    let builds = 0;
    const { openDatabase } = await import("./database.js");
    const { migrateDatabase } = await import("./migrate.js");
    const database = await openDatabase({ dialect: "sqlite", path: ":memory:" });
    try {
      await migrateDatabase(database);
      const counted = queryTemplate<[string], never>((builder, slot) => {
        builds++;
        return builder
          .selectFrom("verbatim_api_keys")
          .selectAll()
          .where("subject_uid", "=", slot(0));
      });
      for (let index = 0; index < 5; index++) await counted.run(database.db, `s${index}`);
      await inTransaction(database, (trx) => counted.run(trx, "t"));
      expect(builds).toBe(1);
    } finally {
      await database.close();
    }
  });
});

describeEachDialect("query templates and plugins", (getDatabase) => {
  it("a database with a plugin sees every run's query; the plain database keeps its own SQL", async () => {
    const { db } = getDatabase();
    const seen: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery(args) {
        seen.push(args.node.kind);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const lookup = queryTemplate<[string], never>((builder, slot) =>
      builder.selectFrom("verbatim_api_keys").selectAll().where("subject_uid", "=", slot(0)),
    );
    await lookup.run(db, "plain");
    await lookup.run(db.withPlugin(recorder), "one");
    await lookup.run(db.withPlugin(recorder), "two");
    expect(seen).toEqual(["SelectQueryNode", "SelectQueryNode"]);
  });
});
