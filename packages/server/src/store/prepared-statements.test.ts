import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freshDatabase,
  postgresUrl,
  type FreshDatabase,
} from "../../../../test/support/databases.js";
import { openDatabase, ARRAY_ROWS_MARKER, type StoreDatabase } from "./database.js";
import { nameStatement, statementName } from "./prepared-statements.js";
import { migrateDatabase } from "./migrate.js";
import { queryTemplate } from "./query-template.js";
import { findConversation, insertConversation } from "./repositories/gateway-conversations.js";

const findKey = queryTemplate<[string], { readonly subject_uid: string }>((db, slot) =>
  db.selectFrom("verbatim_api_keys").select("subject_uid").where("key_sha256", "=", slot(0)),
);

const insertKey = queryTemplate<[string, string], never>((db, slot) =>
  db.insertInto("verbatim_api_keys").values({
    key_sha256: slot(0),
    subject_uid: slot(1),
    key_prefix: "vbk_test",
    created_at: "2026-11-30T00:00:00.000Z",
    revoked_at: null,
  }),
);

// Rows as arrays and a prepared statement together.
const keyArrays = queryTemplate<[string], unknown>(
  (_db, slot) =>
    sql`${sql.raw(ARRAY_ROWS_MARKER)}select subject_uid, key_prefix from verbatim_api_keys where key_sha256 = ${slot(0)}`,
);

const notKept = queryTemplate<[string], { readonly n: number }>(
  (_db, slot) =>
    sql`select count(*)::int as n from verbatim_api_keys where subject_uid = ${slot(0)}`,
  { prepared: false },
);

/** The prepared statements of the session a one-connection database runs on. */
async function preparedHere(database: StoreDatabase): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select name from pg_prepared_statements where name like 'verbatim_%' order by name
  `.execute(database.db);
  return result.rows.map((row) => row.name);
}

describe.skipIf(postgresUrl === undefined)("named prepared statements [postgres]", () => {
  let fresh: FreshDatabase | undefined;
  const opened: StoreDatabase[] = [];
  /** The fresh schema on a pool of one connection, so every query runs in one session. */
  const oneConnection = async (preparedStatements?: boolean) => {
    if (fresh === undefined) throw new Error("not open yet");
    const database = await openDatabase(fresh.location, {
      poolSize: 1,
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
    });
    opened.push(database);
    return database;
  };
  beforeAll(async () => {
    fresh = await freshDatabase("postgres");
  });
  afterAll(async () => {
    for (const database of opened) await database.close();
    await fresh?.cleanup();
  });

  it("B1 runs each query template as a named statement, prepared once per connection", async () => {
    const database = await oneConnection();
    await insertKey.run(database.db, "a".repeat(64), "subject-a");
    await insertKey.run(database.db, "b".repeat(64), "subject-b");
    expect((await findKey.run(database.db, "a".repeat(64))).rows).toEqual([
      { subject_uid: "subject-a" },
    ]);
    expect((await findKey.run(database.db, "b".repeat(64))).rows).toEqual([
      { subject_uid: "subject-b" },
    ]);
    const names = await preparedHere(database);
    // One statement per template, however often it ran.
    expect(names).toHaveLength(2);
    const prepared = await sql<{ statement: string }>`
      select statement from pg_prepared_statements where name like 'verbatim_%'
    `.execute(database.db);
    const texts = prepared.rows.map((row) => row.statement);
    expect(texts.map((text) => statementName(text)).sort()).toEqual(names);
    // Rows as arrays still come back as arrays when prepared.
    expect((await keyArrays.run(database.db, "a".repeat(64))).rows).toEqual([
      ["subject-a", "vbk_test"],
    ]);
    expect(await preparedHere(database)).toHaveLength(3);
    // A template made for one run is not kept on the connection.
    expect((await notKept.run(database.db, "subject-a")).rows).toEqual([{ n: 1 }]);
    expect(await preparedHere(database)).toHaveLength(3);
  });

  it("B1 prepares nothing with preparedStatements: false, with the same answers", async () => {
    const database = await oneConnection(false);
    expect((await findKey.run(database.db, "a".repeat(64))).rows).toEqual([
      { subject_uid: "subject-a" },
    ]);
    expect((await keyArrays.run(database.db, "b".repeat(64))).rows).toEqual([
      ["subject-b", "vbk_test"],
    ]);
    expect(await preparedHere(database)).toEqual([]);
  });

  it("B1 a statement prepared before a migration adds a column still runs after it", async () => {
    const database = await oneConnection();
    const storeAndFind = async (id: string) => {
      await insertConversation(database.db, {
        id,
        subject_uid: "subject-a",
        created_at: "2026-11-30T00:00:00.000Z",
        metadata: "{}",
      });
      return (await findConversation(database.db, "subject-a", id))?.id;
    };
    expect(await storeAndFind("conv_prepared_1")).toBe("conv_prepared_1");
    // What a newer server's migration does while this one runs.
    await sql`alter table ai_gateway_conversations add column added_later text`.execute(
      database.db,
    );
    expect(await storeAndFind("conv_prepared_2")).toBe("conv_prepared_2");
    expect(await findConversation(database.db, "subject-b", "conv_prepared_1")).toBeUndefined();
  });

  it("B1 a statement that failed to prepare (its table missing) is prepared again once it exists", async () => {
    const empty = await freshDatabase("postgres", { migrate: false });
    const database = await openDatabase(empty.location, { poolSize: 1 });
    try {
      await expect(findKey.run(database.db, "a".repeat(64))).rejects.toThrow(
        /verbatim_api_keys.*does not exist/,
      );
      await migrateDatabase(database);
      await insertKey.run(database.db, "a".repeat(64), "subject-late");
      expect((await findKey.run(database.db, "a".repeat(64))).rows).toEqual([
        { subject_uid: "subject-late" },
      ]);
      expect(await preparedHere(database)).toHaveLength(2);
    } finally {
      await database.close();
      await empty.cleanup();
    }
  });

  it("B1 one statement name serves two schemas: each connection reads its own tables", async () => {
    const other = await freshDatabase("postgres");
    try {
      const here = await oneConnection();
      await insertKey.run(other.database.db, "c".repeat(64), "subject-other");
      expect((await findKey.run(here.db, "c".repeat(64))).rows).toEqual([]);
      expect((await findKey.run(other.database.db, "c".repeat(64))).rows).toEqual([
        { subject_uid: "subject-other" },
      ]);
      expect((await findKey.run(here.db, "a".repeat(64))).rows).toEqual([
        { subject_uid: "subject-a" },
      ]);
      expect((await findKey.run(other.database.db, "a".repeat(64))).rows).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });
});

describe("statement names", () => {
  it("B1 leaves statements that answer with * columns unnamed", () => {
    const texts = [
      'select * from "verbatim_api_keys" where "key_sha256" = $1',
      'select "k".* from "verbatim_api_keys" as "k" where "key_sha256" = $1',
      'update "verbatim_api_keys" set "revoked_at" = $1 returning *',
    ];
    for (const text of texts) {
      nameStatement(text);
      expect(statementName(text)).toBeUndefined();
    }
    const counted = 'select count(*) as "n" from "verbatim_api_keys" where "subject_uid" = $1';
    nameStatement(counted);
    expect(statementName(counted)).toMatch(/^verbatim_\d+$/);
  });
});
