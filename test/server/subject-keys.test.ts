/**
 * Issue 34 item 1: the subject in every key. Every primary key, unique constraint and foreign
 * key of a table a subject owns starts with `subject_uid` (read from the database's catalog on
 * both dialects), and migration 0021 converts a database written before it: every row, rowid
 * and search entry kept, the counts' triggers working, the keys enforced.
 */
import { sql } from "kysely";
import { expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import { SUBJECT_OWNED_TABLES } from "../../packages/server/src/store/subject-keys.js";
import { say } from "../support/background-jobs.js";
import { describeEachDialect, freshDatabase, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";

/** A key: its kind, the columns in order and, for a foreign key, the referenced columns. */
interface Key {
  readonly table: string;
  readonly kind: "primary" | "unique" | "foreign";
  readonly columns: readonly string[];
  readonly references?: readonly string[];
}

/**
 * SQLite's body pieces and packs keep `id integer primary key`: the rowid allocates their ids
 * (a single file has no partitions; their (subject_uid, id) index is unique because id is).
 */
const SQLITE_ROWID_KEYS = new Set(["ai_gateway_body_pieces", "ai_gateway_body_packs"]);

async function keysOf(database: StoreDatabase, table: string): Promise<Key[]> {
  const { db } = database;
  if (database.capabilities.dialect === "postgres") {
    const rows = await sql<{ kind: string; columns: string[]; refs: string[] | null }>`
      select c.contype as kind,
        array(select a.attname from unnest(c.conkey) with ordinality k(n, i)
          join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i)::text[] as columns,
        case when c.contype = 'f' then array(select a.attname from unnest(c.confkey) with ordinality k(n, i)
          join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.i)::text[] end as refs
      from pg_constraint c join pg_class t on t.oid = c.conrelid
      where t.relnamespace = to_regnamespace(current_schema()) and c.contype in ('p', 'u', 'f')
        and c.conparentid = 0
        -- A partitioned store declares its foreign keys on each partition (store/partitions.ts).
        and (t.relname = ${table} or t.oid in (select i.inhrelid from pg_inherits i
          where i.inhparent = to_regclass(${table})))`.execute(db);
    const unique = await sql<{ columns: string[] }>`
      select array(select a.attname from unnest(i.indkey::int2[]) with ordinality k(n, o)
          join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.n order by k.o)::text[] as columns
      from pg_index i join pg_class t on t.oid = i.indrelid
      where t.relname = ${table} and t.relnamespace = to_regnamespace(current_schema())
        and i.indisunique`.execute(db);
    return [
      ...rows.rows.map((row) => ({
        table,
        kind:
          row.kind === "p"
            ? ("primary" as const)
            : row.kind === "u"
              ? ("unique" as const)
              : ("foreign" as const),
        columns: row.columns,
        ...(row.refs === null ? {} : { references: row.refs }),
      })),
      ...unique.rows.map((row) => ({ table, kind: "unique" as const, columns: row.columns })),
    ];
  }
  const keys: Key[] = [];
  const info = await sql<{ name: string; pk: number; type: string }>`
    select name, pk, type from pragma_table_info(${table})`.execute(db);
  const primary = info.rows.filter((row) => row.pk > 0).sort((a, b) => a.pk - b.pk);
  keys.push({ table, kind: "primary", columns: primary.map((row) => row.name) });
  const indexes = await sql<{ name: string; unique: number }>`
    select name, "unique" from pragma_index_list(${table})`.execute(db);
  for (const index of indexes.rows.filter((row) => row.unique === 1)) {
    const columns = await sql<{ name: string }>`
      select name from pragma_index_info(${index.name}) order by seqno`.execute(db);
    keys.push({ table, kind: "unique", columns: columns.rows.map((row) => row.name) });
  }
  const foreign = await sql<{ id: number; seq: number; from: string; to: string }>`
    select id, seq, "from", "to" from pragma_foreign_key_list(${table})`.execute(db);
  for (const id of new Set(foreign.rows.map((row) => row.id))) {
    const parts = foreign.rows.filter((row) => row.id === id).sort((a, b) => a.seq - b.seq);
    keys.push({
      table,
      kind: "foreign",
      columns: parts.map((row) => row.from),
      references: parts.map((row) => row.to),
    });
  }
  return keys;
}

/** A conversation of two turns, a job with a turn of items, as the gateway writes them. */
async function writeHistory(database: StoreDatabase, subject: string, word: string) {
  const gateway = new GatewayMessageStore(database);
  const first = await gateway.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      { role: "user", content: [{ type: "text", text: `tell me about ${word}` }] },
      { role: "assistant", content: [{ type: "text", text: "gladly" }] },
    ],
  });
  const tip = first[first.length - 1]?.id ?? null;
  await gateway.appendMessages(subject, {
    previousMessageId: tip,
    messages: [{ role: "user", content: [{ type: "text", text: "more" }] }],
  });
  // A fork from the first answer: a second branch of the conversation.
  await gateway.appendMessages(subject, {
    previousMessageId: tip,
    messages: [{ role: "user", content: [{ type: "text", text: "less" }] }],
  });
  const jobs = new BackgroundAgentJobs(database);
  const job = await jobs.createJob(subject, {
    conversationId: first[0]?.conversationId ?? "",
    retryBudget: 0,
  });
  await jobs.startAttempt(subject, job.id);
  const { turn } = await jobs.startTurn(subject, job.id, [say("a", `working on ${word}`)]);
  await jobs.appendItems(subject, turn.id, [say("b", "done")]);
  await jobs.finishTurn(subject, turn.id, "completed");
  await jobs.completeJob(subject, job.id, { summary: "ok" });
  return { conversationId: first[0]?.conversationId ?? "", jobId: job.id };
}

const ROW_TABLES = [
  "ai_gateway_conversations",
  "ai_gateway_branches",
  "ai_gateway_messages",
  "background_agent_jobs",
  "background_agent_job_turns",
  "background_agent_job_turn_items",
  "background_agent_job_wake_events",
] as const;

/** Every row of the tables the migration rebuilds (with its rowid on SQLite), in one order. */
async function snapshot(database: StoreDatabase): Promise<Record<string, unknown[]>> {
  const sqlite = database.capabilities.dialect === "sqlite";
  const rows: Record<string, unknown[]> = {};
  for (const table of ROW_TABLES) {
    const result = await sql<Record<string, unknown>>`
      select ${sql.raw(sqlite ? "rowid as row_number, " : "")}* from ${sql.id(table)}`.execute(
      database.db,
    );
    rows[table] = result.rows.map((row) => JSON.stringify(row)).sort();
  }
  return rows;
}

describeEachDialect("issue 34 item 1: the subject in every key", (getDatabase, dialect) => {
  it("every primary key, unique constraint and foreign key of a subject-owned table starts with subject_uid", async () => {
    const database = getDatabase();
    const seen: Key[] = [];
    for (const table of SUBJECT_OWNED_TABLES) {
      const keys = await keysOf(database, table);
      expect(
        keys.some((key) => key.kind === "primary"),
        `${table} has a primary key`,
      ).toBe(true);
      for (const key of keys) {
        seen.push(key);
        if (dialect === "sqlite" && SQLITE_ROWID_KEYS.has(table) && key.kind === "primary") {
          expect(key.columns).toEqual(["id"]);
          continue;
        }
        expect(key.columns[0], `${table} ${key.kind} (${key.columns.join(", ")})`).toBe(
          "subject_uid",
        );
        if (key.kind === "foreign")
          expect(key.references?.[0], `${table} references`).toBe("subject_uid");
      }
    }
    // The keys the issue names: widened, not dropped.
    const names = seen.map((key) => `${key.table} ${key.kind} ${key.columns.join(",")}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "ai_gateway_messages primary subject_uid,id",
        "ai_gateway_messages unique subject_uid,branch_id,depth",
        "ai_gateway_messages foreign subject_uid,conversation_id",
        "ai_gateway_messages foreign subject_uid,branch_id",
        "ai_gateway_messages foreign subject_uid,previous_message_id",
        "ai_gateway_branches foreign subject_uid,conversation_id",
        "ai_gateway_recorded_calls primary subject_uid,id",
        "background_agent_job_turns unique subject_uid,job_id,turn_index",
        "background_agent_job_turn_items primary subject_uid,turn_id,position",
        "background_agent_job_turn_items unique subject_uid,turn_id,item_key",
        "background_agent_job_turn_items foreign subject_uid,turn_id",
        "background_agent_job_wake_events foreign subject_uid,job_id",
      ]),
    );
  });

  it("a message cannot join another subject's conversation: the foreign keys hold per subject", async () => {
    const database = getDatabase();
    const owner = uniqueName("owner");
    const { conversationId } = await writeHistory(database, owner, "keys");
    const row = await database.db
      .selectFrom("ai_gateway_messages")
      .selectAll()
      .where("subject_uid", "=", owner)
      .where("conversation_id", "=", conversationId)
      .limit(1)
      .executeTakeFirstOrThrow();
    const intruder = uniqueName("intruder");
    await expect(
      database.db
        .insertInto("ai_gateway_messages")
        .values({
          ...row,
          id: uniqueName("msg"),
          subject_uid: intruder,
          previous_message_id: null,
          depth: 999,
        })
        .execute(),
    ).rejects.toThrow(/foreign key/i);
  });

  it("migration 0021 keeps every row, rowid and search entry of a database written before it", async () => {
    const fresh = await freshDatabase(dialect, { migrate: false });
    try {
      const before = storeMigrations.findIndex(
        (migration) => migration.name === "0021-subject-keys",
      );
      await migrateDatabase(fresh.database, storeMigrations.slice(0, before));
      const subjects = [uniqueName("earlier"), uniqueName("other")];
      const word = uniqueName("zebrafinch");
      const written: { conversationId: string; jobId: string }[] = [];
      for (const subject of subjects)
        written.push(await writeHistory(fresh.database, subject, word));
      const rowsBefore = await snapshot(fresh.database);
      expect(rowsBefore["ai_gateway_messages"]).toHaveLength(8);
      expect(rowsBefore["background_agent_job_turn_items"]).toHaveLength(4);

      const report = await migrateDatabase(fresh.database);
      expect(report.applied).toEqual(storeMigrations.slice(before).map((next) => next.name));
      expect(await snapshot(fresh.database)).toEqual(rowsBefore);

      // The search index still finds the rows by their (kept) rowids.
      const server = await testServer(fresh.database);
      const reply = await server.app.inject({
        method: "GET",
        url: `/ai-gateway/search?q=${word}&limit=20`,
        headers: server.operator,
      });
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.body).toContain(written[0]?.conversationId);
      expect(reply.body).toContain(written[1]?.jobId);
      await server.app.close();

      // The counts' triggers were made again: a new message is counted in its conversation.
      const gateway = new GatewayMessageStore(fresh.database);
      const conversation = () =>
        fresh.database.db
          .selectFrom("ai_gateway_conversations")
          .select(["message_count"])
          .where("subject_uid", "=", subjects[0] ?? "")
          .where("id", "=", written[0]?.conversationId ?? "")
          .executeTakeFirstOrThrow();
      const countBefore = (await conversation()).message_count;
      const tip = await fresh.database.db
        .selectFrom("ai_gateway_messages")
        .select("id")
        .where("subject_uid", "=", subjects[0] ?? "")
        .where("conversation_id", "=", written[0]?.conversationId ?? "")
        .orderBy("depth", "desc")
        .limit(1)
        .executeTakeFirstOrThrow();
      await gateway.appendMessages(subjects[0] ?? "", {
        previousMessageId: tip.id,
        messages: [{ role: "user", content: [{ type: "text", text: "after the migration" }] }],
      });
      expect((await conversation()).message_count).toBe(countBefore + 1);
      // Foreign keys are on again (SQLite turned them off for the rebuild).
      if (dialect === "sqlite") {
        const pragma = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(
          fresh.database.db,
        );
        expect(pragma.rows[0]?.foreign_keys).toBe(1);
      }
    } finally {
      await fresh.cleanup();
    }
  });
});
