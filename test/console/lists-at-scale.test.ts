/**
 * Issue 34, item 4: lists and search that scale, on both databases. Each conversation keeps its
 * message count and newest message time (triggers of migration 0017, through appends, deletions
 * and the migration's own count of older rows); the console's lists and search page by key, so
 * a row written between two pages neither repeats nor hides a row, and a page's statement reads
 * through an index in list order; PostgreSQL's search reads the trigram index.
 */
import { CompiledQuery, sql } from "kysely";
import { expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import {
  searchConsole,
  type SearchKey,
} from "../../packages/server/src/store/repositories/console-search.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { ACROSS_SUBJECTS } from "../../packages/server/src/store/subject-keys.js";
import { trigramText } from "../../packages/server/src/store/search-indexes.js";
import { describeEachDialect, freshDatabase, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";

interface Summary {
  id: string;
  subject_uid: string;
  message_count: number;
  last_message_at: string | null;
}

async function counted(database: StoreDatabase, subject: string) {
  const rows = await database.db
    .selectFrom("ai_gateway_conversations as c")
    .select([
      "c.id",
      "c.message_count",
      "c.last_message_at",
      sql<number>`(select count(*) from ai_gateway_messages m
        where m.subject_uid = c.subject_uid and m.conversation_id = c.id)`.as("actual_count"),
      sql<string | null>`(select max(m.created_at) from ai_gateway_messages m
        where m.subject_uid = c.subject_uid and m.conversation_id = c.id)`.as("actual_last"),
    ])
    .where("c.subject_uid", "=", subject)
    .orderBy("c.id")
    .execute();
  return rows.map((row) => ({
    kept: [Number(row.message_count), row.last_message_at ?? null],
    actual: [Number(row.actual_count), row.actual_last ?? null],
  }));
}

async function appendTurns(store: GatewayMessageStore, subject: string, turns: number) {
  let previous: string | null = null;
  for (let turn = 0; turn < turns; turn++) {
    const written = await store.appendMessages(subject, {
      previousMessageId: previous,
      messages: [
        { role: "user", content: [{ type: "text", text: `question ${turn}` }] },
        { role: "assistant", content: [{ type: "text", text: `answer ${turn}` }] },
      ],
    });
    previous = written[written.length - 1]?.id ?? null;
  }
  return previous;
}

describeEachDialect("issue 34 item 4: lists and search at scale", (getDatabase, dialect) => {
  it("each conversation keeps its message count and newest time through appends and deletions", async () => {
    const database = getDatabase();
    const store = new GatewayMessageStore(database);
    const subject = uniqueName("counts");
    const tip = await appendTurns(store, subject, 3);
    await appendTurns(store, subject, 1);
    // A fork from the first conversation's tip adds to the same conversation.
    const [fork] = await store.appendMessages(subject, {
      previousMessageId: tip,
      messages: [{ role: "user", content: [{ type: "text", text: "and then?" }] }],
    });
    const after = await counted(database, subject);
    expect(after).toHaveLength(2);
    for (const row of after) expect(row.kept).toEqual(row.actual);
    expect(after.map((row) => row.kept[0]).sort()).toEqual([2, 7]);
    // A prune deletes a conversation's messages in one statement: its counts follow.
    await database.db
      .deleteFrom("ai_gateway_messages")
      .where("subject_uid", "=", subject)
      .where("conversation_id", "=", fork?.conversationId ?? "")
      .execute();
    const emptied = await counted(database, subject);
    expect(emptied.map((row) => row.kept[0]).sort()).toEqual([0, 2]);
    for (const row of await counted(database, subject)) expect(row.kept).toEqual(row.actual);
  });

  it("migration 0017 counts the conversations stored before it", async () => {
    const fresh = await freshDatabase(dialect, { migrate: false });
    try {
      const before = storeMigrations.findIndex(
        (migration) => migration.name === "0017-console-lists-and-search",
      );
      await migrateDatabase(fresh.database, storeMigrations.slice(0, before));
      const subject = uniqueName("older");
      const store = new GatewayMessageStore(fresh.database);
      await appendTurns(store, subject, 4);
      await appendTurns(store, subject, 2);
      await migrateDatabase(fresh.database);
      const rows = await counted(fresh.database, subject);
      expect(rows.map((row) => row.kept[0]).sort()).toEqual([4, 8]);
      for (const row of rows) expect(row.kept).toEqual(row.actual);
    } finally {
      await fresh.cleanup();
    }
  });

  it("list pages follow by key: a conversation written between two pages repeats and hides nothing", async () => {
    const database = getDatabase();
    const store = new GatewayMessageStore(database);
    const prefix = uniqueName("paging");
    for (let index = 0; index < 5; index++) await appendTurns(store, `${prefix}-${index}`, 1);
    const server = await testServer(database);
    const page = async (cursor: string | null) => {
      const reply = await server.app.inject({
        method: "GET",
        url: `/ai-gateway/conversations?subject_prefix=${prefix}&limit=2${cursor === null ? "" : `&cursor=${cursor}`}`,
        headers: server.operator,
      });
      expect(reply.statusCode, reply.body).toBe(200);
      return reply.json() as { data: Summary[]; next_cursor: string | null };
    };
    try {
      const first = await page(null);
      // A newer conversation arrives: with offset paging the next page would repeat a row.
      await appendTurns(store, `${prefix}-late`, 1);
      const seen = [...first.data];
      for (let cursor = first.next_cursor; cursor !== null;) {
        const next = await page(cursor);
        seen.push(...next.data);
        cursor = next.next_cursor;
      }
      expect(seen.map((row) => row.subject_uid)).toEqual(
        [4, 3, 2, 1, 0].map((i) => `${prefix}-${i}`),
      );
      expect(seen.every((row) => row.message_count === 2)).toBe(true);
      const bad = await server.app.inject({
        method: "GET",
        url: `/ai-gateway/conversations?limit=2&cursor=${Buffer.from("o:2").toString("base64url")}`,
        headers: server.operator,
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toMatch(/the cursor is not one this server gave/);
    } finally {
      await server.app.close();
    }
  });

  it("search's first try among the newest rows gives the pages the index gives, or leaves them to it", async () => {
    const database = getDatabase();
    const store = new GatewayMessageStore(database);
    const subject = uniqueName("probe");
    const common = uniqueName("common");
    const rare = uniqueName("rare");
    let previous: string | null = null;
    for (let index = 0; index < 24; index++) {
      const text = `${common} turn ${index}${index % 7 === 0 ? ` ${rare} here` : ""}`;
      const [written] = await store.appendMessages(subject, {
        previousMessageId: previous,
        messages: [{ role: "user", content: [{ type: "text", text }] }],
      });
      previous = written?.id ?? null;
    }
    const { db, capabilities } = database;
    const walk = async (query: string, probeRows: number) => {
      const pages: string[][] = [];
      let after: SearchKey | undefined;
      for (;;) {
        const rows = await searchConsole(db, capabilities, { query, limit: 5, after, probeRows });
        pages.push(rows.map((row) => `${row.kind} ${row.id} ${row.body.length}`));
        const last = rows[rows.length - 1];
        if (rows.length < 5 || last === undefined) return pages;
        after = [last.created_at, last.parent_id, last.id, last.kind];
      }
    };
    for (const query of [common, rare, `${rare} here`, "no such text anywhere"]) {
      const indexed = await walk(query, 0);
      // 6 rows of each table: a common word decides its pages among them, a rare one cannot.
      expect(await walk(query, 6), query).toEqual(indexed);
      expect(await walk(query, 100_000), query).toEqual(indexed);
    }
    expect((await walk(common, 0)).flat()).toHaveLength(24);
    expect((await walk(rare, 0)).flat()).toHaveLength(4);
  });

  it.runIf(dialect === "sqlite")(
    "a list page reads an index in list order, at any depth, with no sort of its own",
    async () => {
      const database = getDatabase();
      // Every subject's list (across subjects, as the console's), then one subject's.
      for (const [subjectFilter, across] of [
        [sql`1 = 1`, sql.raw(ACROSS_SUBJECTS)],
        [sql`c.subject_uid = 'someone'`, sql``],
      ] as const) {
        const plan = await database.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(
            sql`explain query plan select c.id from ai_gateway_conversations c
              where ${subjectFilter} and (c.created_at, c.id) < ('2026-01-01', 'x')
              order by c.created_at desc, c.id desc limit 51 ${across}`.compile(database.db).sql,
          ),
        );
        const text = plan.rows.map((row) => row.detail).join("\n");
        expect(text).toMatch(/USING (COVERING )?INDEX ai_gateway_conversations_(subject_)?newest/);
        expect(text).not.toMatch(/TEMP B-TREE/);
      }
    },
  );

  it.runIf(dialect === "postgres")(
    "PostgreSQL's search reads the trigram index of the messages' text without spaces",
    async () => {
      const database = getDatabase();
      const plan = await database.db.connection().execute(async (connection) => {
        await sql`set enable_seqscan = off`.execute(connection);
        try {
          // The search looks through every subject's messages, as the console's does.
          return await sql<{ "QUERY PLAN": string }>`explain select m.id from ai_gateway_messages m
            where ${trigramText(sql.ref("m.content"))} ilike ${"%weatherreport%"} escape '\\'
            ${sql.raw(ACROSS_SUBJECTS)}`.execute(connection);
        } finally {
          await sql`reset enable_seqscan`.execute(connection);
        }
      });
      expect(plan.rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(
        /ai_gateway_messages_search_trgm/,
      );
    },
  );
});
