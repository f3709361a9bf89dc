import { sql, type KyselyPlugin, type RootOperationNode } from "kysely";
import pg from "pg";
import { expect, it } from "vitest";
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import { openApiKeyLookup } from "../../packages/server/src/gateway/keys/api-key-cache.js";
import { createApiKey, revokeApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import type { StoreDatabase } from "../../packages/server/src/store/index.js";
import { describeEachDialect, postgresUrl, uniqueName } from "../support/databases.js";
import { until } from "../support/until.js";

/** A view of the database that counts the reads of verbatim_api_keys and can hold them. */
function countingReads(database: StoreDatabase) {
  /** `hold`: the next read's answer waits for it (once); `held` is told when it starts waiting. */
  const counter = {
    reads: 0,
    hold: undefined as Promise<void> | undefined,
    held: () => undefined as void,
  };
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      const node = args.node as RootOperationNode;
      if (node.kind === "SelectQueryNode") counter.reads++;
      return args.node;
    },
    async transformResult(args) {
      const hold = counter.hold;
      if (hold !== undefined) {
        counter.hold = undefined;
        counter.held();
        await hold;
      }
      return args.result;
    },
  };
  return { counter, database: { ...database, db: database.db.withPlugin(plugin) } };
}

/** Polls until `check` holds (a notification is on its way), failing after two seconds. */
async function eventually(check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 2_000) throw new Error("not within 2 s");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return performance.now() - started;
}

describeEachDialect("API key lookups", (getDatabase, dialect) => {
  it("B14 a valid key is read once on PostgreSQL, every time on SQLite (on a connection of its own)", async () => {
    const { counter, database } = countingReads(getDatabase());
    const keys = await openApiKeyLookup(database);
    try {
      const subject = uniqueName("subject");
      const { key } = await createApiKey(getDatabase(), subject);
      for (let index = 0; index < 5; index++) expect(await keys.subjectOf(key)).toBe(subject);
      expect(keys.caching).toBe(dialect === "postgres");
      // SQLite reads every time on the lookup's own connection, not through the store's.
      expect(counter.reads).toBe(dialect === "postgres" ? 1 : 0);
      // Unknown and malformed keys are never kept: a key created later works at once.
      const later = `vbk_${"A".repeat(43)}`;
      expect(await keys.subjectOf(later)).toBeUndefined();
      expect(await keys.subjectOf("not a key")).toBeUndefined();
      await getDatabase()
        .db.insertInto("verbatim_api_keys")
        .values({
          key_sha256: sha256Hex(later),
          subject_uid: subject,
          key_prefix: later.slice(0, 10),
          created_at: new Date().toISOString(),
          revoked_at: null,
        })
        .execute();
      expect(await keys.subjectOf(later)).toBe(subject);
    } finally {
      await keys.close();
    }
  });

  it("B14 a revoked key is refused as soon as the change is heard: by verbatim keys revoke, by SQL, by deletion", async () => {
    const keys = await openApiKeyLookup(getDatabase());
    try {
      const subject = uniqueName("subject");
      const revokeByCommand = async (key: string) => void (await revokeApiKey(getDatabase(), key));
      const revokeBySql = async (key: string) =>
        void (await getDatabase()
          .db.updateTable("verbatim_api_keys")
          .set({ revoked_at: new Date().toISOString() })
          .where("key_sha256", "=", sha256Hex(key))
          .execute());
      const remove = async (key: string) =>
        void (await getDatabase()
          .db.deleteFrom("verbatim_api_keys")
          .where("key_sha256", "=", sha256Hex(key))
          .execute());
      for (const revoke of [revokeByCommand, revokeBySql, remove]) {
        const { key } = await createApiKey(getDatabase(), subject);
        expect(await keys.subjectOf(key)).toBe(subject);
        expect(await keys.subjectOf(key)).toBe(subject);
        await revoke(key);
        if (dialect === "sqlite") {
          expect(await keys.subjectOf(key)).toBeUndefined();
        } else {
          // The notification arrives after the commit, within milliseconds.
          const waited = await eventually(async () => (await keys.subjectOf(key)) === undefined);
          expect(waited).toBeLessThan(2_000);
        }
        expect(await keys.subjectOf(key)).toBeUndefined();
      }
    } finally {
      await keys.close();
    }
  });

  it("B14 a read that a revocation overtook is not kept", async () => {
    const { counter, database } = countingReads(getDatabase());
    const keys = await openApiKeyLookup(database);
    try {
      const subject = uniqueName("subject");
      const { key } = await createApiKey(getDatabase(), subject);
      // Kept before the read below: its revocation, heard after the key's (notifications come
      // in commit order), says the key's was heard.
      const { key: sentinel } = await createApiKey(getDatabase(), subject);
      expect(await keys.subjectOf(sentinel)).toBe(subject);
      let release: () => void = () => undefined;
      counter.hold = new Promise((resolve) => (release = resolve));
      const answered = new Promise<void>((resolve) => (counter.held = resolve));
      // The read answers "valid" from before the revocation, but returns after it was heard.
      // (SQLite reads on a connection of its own, unheld: it answers at once.)
      const read = keys.subjectOf(key);
      if (dialect === "postgres") await answered;
      await revokeApiKey(getDatabase(), key);
      if (dialect === "postgres") {
        await revokeApiKey(getDatabase(), sentinel);
        await until(async () => (await keys.subjectOf(sentinel)) === undefined, 20_000, 2);
      }
      release();
      expect(await read).toBe(subject);
      expect(await keys.subjectOf(key)).toBeUndefined();
    } finally {
      await keys.close();
    }
  });

  it("B14 a key is read again after maxAgeMs", async () => {
    let now = 0;
    const { counter, database } = countingReads(getDatabase());
    const keys = await openApiKeyLookup(database, { maxAgeMs: 1_000, now: () => now });
    try {
      const subject = uniqueName("subject");
      const { key } = await createApiKey(getDatabase(), subject);
      await keys.subjectOf(key);
      now = 999;
      await keys.subjectOf(key);
      const kept = counter.reads;
      now = 1_000;
      await keys.subjectOf(key);
      // SQLite keeps nothing (its reads are on the lookup's own connection).
      expect(counter.reads).toBe(dialect === "postgres" ? kept + 1 : 0);
      expect(kept).toBe(dialect === "postgres" ? 1 : 0);
    } finally {
      await keys.close();
    }
  });

  it("B14 while the notification connection is down nothing is kept; it reconnects", async () => {
    if (dialect === "sqlite") {
      // SQLite keeps nothing in the first place.
      const keys = await openApiKeyLookup(getDatabase());
      expect(keys.caching).toBe(false);
      await keys.close();
      return;
    }
    const errors: Error[] = [];
    const { counter, database } = countingReads(getDatabase());
    const keys = await openApiKeyLookup(database, { onError: (error) => errors.push(error) });
    try {
      const subject = uniqueName("subject");
      const { key } = await createApiKey(getDatabase(), subject);
      expect(await keys.subjectOf(key)).toBe(subject);
      // Cut the listening connection from the server side.
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      try {
        await admin.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
          [`verbatim notifications ${process.pid}`],
        );
      } finally {
        await admin.end();
      }
      await eventually(async () => !keys.caching);
      expect(errors.length).toBeGreaterThan(0);
      // Down: every lookup reads the key.
      const before = counter.reads;
      await keys.subjectOf(key);
      await keys.subjectOf(key);
      expect(counter.reads).toBe(before + 2);
      // Back: kept again.
      await eventually(async () => keys.caching);
      await keys.subjectOf(key);
      const after = counter.reads;
      await keys.subjectOf(key);
      expect(counter.reads).toBe(after);
    } finally {
      await keys.close();
    }
  });

  it("B14 with the cache off every lookup reads the key", async () => {
    const { counter, database } = countingReads(getDatabase());
    const keys = await openApiKeyLookup(database, { cache: false });
    try {
      const { key } = await createApiKey(getDatabase(), uniqueName("subject"));
      await keys.subjectOf(key);
      await keys.subjectOf(key);
      expect(keys.caching).toBe(false);
      expect(counter.reads).toBe(2);
    } finally {
      await keys.close();
    }
  });

  it("B14 the trigger is installed on PostgreSQL only", async () => {
    const found = await sql<{ n: number }>`
      select count(*) as n from information_schema.triggers
      where trigger_name = 'verbatim_api_key_changed' and trigger_schema = current_schema()`
      .execute(getDatabase().db)
      .then((result) => Number(result.rows[0]?.n))
      .catch(() => 0);
    expect(found).toBe(dialect === "postgres" ? 2 : 0);
  });
});
