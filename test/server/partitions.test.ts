/**
 * Issue 34 item 2: PostgreSQL's subject-owned tables hash-partitioned by subject.
 * `verbatim db migrate --partitions N` and the serve setting `VERBATIM_PG_PARTITIONS` make
 * them partitioned (a store written before keeps every row and goes on working), a second run
 * changes nothing, another number or SQLite is refused; and the plan check the statement
 * audits use (test/support/statement-audit.ts) fails a statement that names the subject but
 * reads every partition.
 */
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { bufferIO, main } from "verbatim-llm/cli";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { startServer } from "../../packages/server/src/server/serve.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { subjectPartitions } from "../../packages/server/src/store/partitions.js";
import { SUBJECT_OWNED_TABLES } from "../../packages/server/src/store/subject-keys.js";
import { freshDatabase, postgresUrl, uniqueName } from "../support/databases.js";
import {
  auditedDatabase,
  expectEveryStatementNamesTheSubject,
  statementsReadingSeveralPartitions,
} from "../support/statement-audit.js";

async function conversationRows(database: StoreDatabase) {
  const rows = await sql<{ row: string }>`
    select row_to_json(m)::text as row from ai_gateway_messages m order by subject_uid, id`.execute(
    database.db,
  );
  return rows.rows.map((row) => row.row);
}

async function appendTwoTurns(store: GatewayMessageStore, subject: string) {
  const first = await store.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      { role: "user", content: [{ type: "text", text: "first question" }] },
      { role: "assistant", content: [{ type: "text", text: "first answer" }] },
    ],
  });
  return store.appendMessages(subject, {
    previousMessageId: first[first.length - 1]?.id ?? null,
    messages: [{ role: "user", content: [{ type: "text", text: "second question" }] }],
  });
}

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 2: partitions by subject [postgres]",
  () => {
    it("db migrate --partitions 4 partitions every subject-owned table, keeps the rows, and a second run changes nothing", async () => {
      // Migrated here, not by freshDatabase: unpartitioned even in the suite's partitioned pass.
      const fresh = await freshDatabase("postgres", { migrate: false });
      try {
        await migrateDatabase(fresh.database);
        const store = new GatewayMessageStore(fresh.database);
        const subjects = [uniqueName("p"), uniqueName("p"), uniqueName("p")];
        for (const subject of subjects) await appendTwoTurns(store, subject);
        const before = await conversationRows(fresh.database);

        const io = bufferIO();
        const code = await main(
          ["db", "migrate", "--db", fresh.locationText, "--partitions", "4", "--json"],
          io,
        );
        expect(code, io.err()).toBe(0);
        const report = JSON.parse(io.out().toString()) as Record<string, unknown>;
        expect(report["partitions"]).toBe(4);
        expect([...(report["partitioned"] as string[])].sort()).toEqual(
          [...SUBJECT_OWNED_TABLES].sort(),
        );
        const partitions = await subjectPartitions(fresh.database.db as never);
        expect([...partitions.values()]).toEqual(SUBJECT_OWNED_TABLES.map(() => 4));
        expect(await conversationRows(fresh.database)).toEqual(before);

        // The rows spread over the partitions by subject, and the store goes on working.
        const spread = await sql<{ partition: string }>`
        select distinct tableoid::regclass::text as partition from ai_gateway_messages`.execute(
          fresh.database.db,
        );
        expect(spread.rows.length).toBeGreaterThan(0);
        const [fork] = await appendTwoTurns(
          new GatewayMessageStore(fresh.database),
          subjects[0] ?? "",
        );
        expect(fork?.id).toMatch(/^msg_/);
        const counted = await sql<{ message_count: number; actual: number }>`
        select c.message_count, (select count(*) from ai_gateway_messages m
          where m.subject_uid = c.subject_uid and m.conversation_id = c.id)::int as actual
        from ai_gateway_conversations c where c.subject_uid = ${subjects[0]}`.execute(
          fresh.database.db,
        );
        for (const row of counted.rows) expect(row.message_count).toBe(row.actual);

        const again = bufferIO();
        expect(
          await main(["db", "migrate", "--db", fresh.locationText, "--partitions", "4"], again),
        ).toBe(0);
        expect(again.out().toString()).toContain("already in 4 partitions each");

        const other = bufferIO();
        expect(
          await main(["db", "migrate", "--db", fresh.locationText, "--partitions", "8"], other),
        ).toBe(1);
        expect(other.err()).toContain("split into 4 partitions already, not 8");
      } finally {
        await fresh.cleanup();
      }
    });

    it("foreign keys are declared per partition, each on the partition of the same number, and still refuse a row that refers to nothing", async () => {
      const fresh = await freshDatabase("postgres", { migrate: false });
      const keys = async () =>
        (
          await sql<{ key: string }>`
          select t.relname || ' ' || c.conname || ' -> ' || r.relname as key
          from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_class r on r.oid = c.confrelid
          where c.contype = 'f' and t.relnamespace = to_regnamespace(current_schema())
          order by 1`.execute(fresh.database.db)
        ).rows.map((row) => row.key);
      try {
        await migrateDatabase(fresh.database);
        const whole = await keys();
        expect(whole).toContain(
          "ai_gateway_messages ai_gateway_messages_conversation_fkey -> ai_gateway_conversations",
        );
        const migrate = async () => {
          const io = bufferIO();
          const code = await main(
            ["db", "migrate", "--db", fresh.locationText, "--partitions", "4"],
            io,
          );
          expect(code, io.err()).toBe(0);
        };
        await migrate();
        const perPartition = whole.flatMap((key) => {
          const [table, name, , reference] = key.split(" ");
          return [0, 1, 2, 3].map((r) => `${table}_p${r} ${name}_p${r} -> ${reference}_p${r}`);
        });
        expect(await keys()).toEqual([...perPartition].sort());

        // A store partitioned by an earlier version (keys on the whole table): the next run
        // declares them per partition.
        for (let r = 0; r < 4; r++) {
          await sql`alter table ${sql.id(`ai_gateway_messages_p${r}`)}
            drop constraint ${sql.id(`ai_gateway_messages_conversation_fkey_p${r}`)}`.execute(
            fresh.database.db,
          );
        }
        await sql`alter table ai_gateway_messages add constraint ai_gateway_messages_conversation_fkey
          foreign key (subject_uid, conversation_id)
          references ai_gateway_conversations (subject_uid, id)`.execute(fresh.database.db);
        await migrate();
        expect(await keys()).toEqual([...perPartition].sort());

        const subject = uniqueName("p");
        await appendTwoTurns(new GatewayMessageStore(fresh.database), subject);
        const orphan = sql`insert into ai_gateway_messages
          (id, subject_uid, conversation_id, previous_message_id, type, role, status, content,
           metadata, branch_id, depth, context_start_depth, created_at, updated_at)
          select 'msg_orphan', subject_uid, 'conv_missing', null, type, role, status, content,
            metadata, branch_id, 99, 0, created_at, updated_at
          from ai_gateway_messages where subject_uid = ${subject} limit 1`;
        await expect(orphan.execute(fresh.database.db)).rejects.toThrow(
          /ai_gateway_messages_conversation_fkey_p\d/,
        );
      } finally {
        await fresh.cleanup();
      }
    });

    it("an append's own checks lock one partition of each table: its foreign keys and the conversation counts", async () => {
      const fresh = await freshDatabase("postgres", { migrate: false });
      try {
        await migrateDatabase(fresh.database);
        const io = bufferIO();
        const code = await main(
          ["db", "migrate", "--db", fresh.locationText, "--partitions", "4"],
          io,
        );
        expect(code, io.err()).toBe(0);
        const subject = uniqueName("p");
        const [tip] = await appendTwoTurns(new GatewayMessageStore(fresh.database), subject);
        const read = await fresh.database.db.transaction().execute(async (trx) => {
          // As the append writes a message: the row's foreign keys are checked and the count
          // trigger updates its conversation, all inside this transaction.
          await sql`insert into ai_gateway_messages
            (id, subject_uid, conversation_id, previous_message_id, type, role, status, content,
             metadata, branch_id, depth, context_start_depth, created_at, updated_at)
            select 'msg_next', subject_uid, conversation_id, id, type, role, status, content,
              metadata, branch_id, depth + 1, context_start_depth, created_at, updated_at
            from ai_gateway_messages where subject_uid = ${subject} and id = ${tip?.id}`.execute(
            trx,
          );
          // What a statement plans or runs on, it locks (PostgreSQL 15 locks every partition
          // of a generic plan, pruned or not): the partitions, and their indexes, locked here.
          const scans = await sql<{ partition: string }>`
            select distinct c.relname as partition from pg_locks l join pg_class c on c.oid = l.relation
            where l.pid = pg_backend_pid() and l.locktype = 'relation'
              and c.relnamespace = to_regnamespace(current_schema()) and c.relname ~ '_p[0-9]+$'
            order by 1`.execute(trx);
          const home = await sql<{ partition: string }>`
            select tableoid::regclass::text as partition from ai_gateway_conversations
            where subject_uid = ${subject}`.execute(trx);
          return { scans: scans.rows.map((row) => row.partition), home: home.rows[0]?.partition };
        });
        const number = read.home?.match(/_p[0-9]+$/)?.[0];
        expect(number).toBeDefined();
        expect(read.scans).toContain(`ai_gateway_conversations${number}`);
        expect(read.scans.filter((partition) => !partition.endsWith(number ?? ""))).toEqual([]);
      } finally {
        await fresh.cleanup();
      }
    });

    it("--partitions that is not a whole number from 2 to 1024, or for SQLite, is a usage error", async () => {
      for (const bad of ["1", "abc", "2000", "4.5"]) {
        const io = bufferIO();
        expect(
          await main(["db", "migrate", "--db", `${postgresUrl ?? ""}`, "--partitions", bad], io),
        ).toBe(2);
        expect(io.err()).toContain("--partitions must be a whole number from 2 to 1024");
      }
      const io = bufferIO();
      expect(
        await main(["db", "migrate", "--db", "/tmp/never-made.sqlite", "--partitions", "4"], io),
      ).toBe(2);
      expect(io.err()).toContain("--partitions needs a PostgreSQL database");
    });

    it("serve with VERBATIM_PG_PARTITIONS=4 starts on partitioned tables", async () => {
      const fresh = await freshDatabase("postgres", { migrate: false });
      try {
        const lines: string[] = [];
        const server = await startServer({
          database: fresh.locationText,
          port: 0,
          env: {
            VERBATIM_WEB_BUILD: "off",
            VERBATIM_OPERATOR_TOKEN: "vop_partitions",
            VERBATIM_PG_PARTITIONS: "4",
          },
          say: (line) => lines.push(line),
        });
        try {
          const partitions = await subjectPartitions(fresh.database.db as never);
          expect([...partitions.values()]).toEqual(SUBJECT_OWNED_TABLES.map(() => 4));
          expect(lines.join("\n")).toContain("into 4 partitions each");
          const reply = await fetch(`${server.url}/ai-gateway/conversations`, {
            headers: { authorization: "Bearer vop_partitions" },
          });
          expect(reply.status).toBe(200);
        } finally {
          await server.close();
        }
      } finally {
        await fresh.cleanup();
      }
    });

    it("the audits' plan check fails a statement that names the subject but reads every partition", async () => {
      const audit = await auditedDatabase("postgres");
      try {
        const subject = uniqueName("plans");
        await sql`select id from ai_gateway_messages where subject_uid = ${subject}`.execute(
          audit.database.db,
        );
        await expectEveryStatementNamesTheSubject(audit);
        const wide = await auditedDatabase("postgres");
        try {
          await sql`select id from ai_gateway_messages where subject_uid <> ${subject}`.execute(
            wide.database.db,
          );
          expect(await statementsReadingSeveralPartitions(wide)).toEqual([
            "ai_gateway_messages × 4: select id from ai_gateway_messages where subject_uid <> $1",
          ]);
        } finally {
          await wide.cleanup();
        }
      } finally {
        await audit.cleanup();
      }
    });
  },
);
