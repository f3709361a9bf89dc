/**
 * Issue 34, item 4: a phrase search that scales. On both databases a phrase is matched as
 * written (case aside): not its words apart, not its words run together, not with other spaces.
 * On PostgreSQL its candidates come from the trigram index of the text without spaces (migration
 * 0023), which holds the trigrams across the phrase's words: the index gives the rows holding
 * the phrase, not every row holding its words, and misses none; the migration makes the index
 * again on a store written before it, partitioned or not.
 */
import { randomBytes } from "node:crypto";
import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import { partitionBySubject } from "../../packages/server/src/store/partitions.js";
import { searchConsole } from "../../packages/server/src/store/repositories/console-search.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import {
  describeEachDialect,
  freshDatabase,
  postgresUrl,
  type FreshDatabase,
} from "../support/databases.js";

/** A word of letters and digits found nowhere else in the store. */
const word = (): string => `w${randomBytes(5).toString("hex")}`;

async function writeTexts(database: StoreDatabase, subject: string, texts: readonly string[]) {
  const store = new GatewayMessageStore(database);
  let previous: string | null = null;
  const ids = new Map<string, string>();
  for (const text of texts) {
    const [written] = await store.appendMessages(subject, {
      previousMessageId: previous,
      messages: [{ role: "user", content: [{ type: "text", text }] }],
    });
    previous = written?.id ?? null;
    if (written !== undefined) ids.set(written.id, text);
  }
  return ids;
}

/** The texts of every match of `query`, through the index (no first try among the newest). */
async function found(database: StoreDatabase, query: string): Promise<string[]> {
  const rows = await searchConsole(database.db, database.capabilities, {
    query,
    limit: 100,
    probeRows: 0,
  });
  return rows.map((row) => (JSON.parse(row.body) as [{ text: string }])[0].text).sort();
}

describeEachDialect("issue 34 item 4: phrase search", (getDatabase) => {
  it("a phrase matches as written, case aside: not its words apart, run together or with other spaces", async () => {
    const [a, b] = [word(), word()];
    const texts = [
      `${a} ${b}`,
      `before ${a.toUpperCase()} ${b} after`,
      `${a} and ${b}`,
      `${b} ${a}`,
      `${a}${b}`,
      `${a}  ${b}`,
      `${a} ${b}x and more`,
    ];
    await writeTexts(getDatabase(), word(), texts);
    expect(await found(getDatabase(), `${a} ${b}`)).toEqual(
      [`${a} ${b}`, `before ${a.toUpperCase()} ${b} after`, `${a} ${b}x and more`].sort(),
    );
    expect(await found(getDatabase(), `${a}  ${b}`)).toEqual([`${a}  ${b}`]);
    expect(await found(getDatabase(), `${a}${b}`)).toEqual([`${a}${b}`]);
    expect(await found(getDatabase(), ` ${a} ${b} `)).toEqual([
      `before ${a.toUpperCase()} ${b} after`,
    ]);
    expect(await found(getDatabase(), `${b}x and`)).toEqual([`${a} ${b}x and more`]);
    expect(await found(getDatabase(), `${a} and ${b}`)).toEqual([`${a} and ${b}`]);
  });
});

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 4: PostgreSQL's phrase candidates [postgres]",
  () => {
    let fresh: FreshDatabase;
    const statements: { text: string; values: readonly unknown[] }[] = [];
    beforeAll(async () => {
      fresh = await freshDatabase("postgres", {
        onStatement: (text, values) => statements.push({ text, values: values ?? [] }),
      });
    });
    afterAll(async () => fresh.cleanup());

    it("the trigram index gives the rows holding the phrase, not every row holding its words", async () => {
      const [a, b] = [word(), word()];
      const texts = [
        ...Array.from({ length: 30 }, (_, index) => `${a} then ${index} then ${b}`),
        ...Array.from({ length: 30 }, (_, index) => `${b} ${index} ${a}`),
        ...Array.from({ length: 5 }, (_, index) => `turn ${index}: ${a} ${b}`),
      ];
      await writeTexts(fresh.database, word(), texts);
      statements.length = 0;
      expect(await found(fresh.database, `${a} ${b}`)).toHaveLength(5);
      const search = statements.find((statement) => /ilike/i.test(statement.text));
      expect(search, "the search's statement").toBeDefined();
      const plan = await fresh.database.db.connection().execute(async (connection) => {
        // A table this small is read whole unless told otherwise.
        await sql`set enable_seqscan = off`.execute(connection);
        try {
          const result = await connection.executeQuery<{ "QUERY PLAN": unknown }>(
            CompiledQuery.raw(`explain (analyze, format json) ${search?.text ?? ""}`, [
              ...(search?.values ?? []),
            ]),
          );
          return result.rows[0]?.["QUERY PLAN"];
        } finally {
          await sql`reset enable_seqscan`.execute(connection);
        }
      });
      const scans: { index: string; rows: number }[] = [];
      const visit = (node: unknown): void => {
        if (Array.isArray(node)) return node.forEach(visit);
        if (node === null || typeof node !== "object") return;
        const entry = node as Record<string, unknown>;
        if (entry["Node Type"] === "Bitmap Index Scan") {
          scans.push({ index: String(entry["Index Name"]), rows: Number(entry["Actual Rows"]) });
        }
        Object.values(entry).forEach(visit);
      };
      visit(typeof plan === "string" ? JSON.parse(plan) : plan);
      const messages = scans.filter((scan) =>
        scan.index.startsWith("ai_gateway_messages_search_trgm"),
      );
      expect(messages.length, JSON.stringify(scans)).toBeGreaterThan(0);
      // On the text as written the index gave all 65 rows holding both words.
      expect(messages.reduce((sum, scan) => sum + scan.rows, 0)).toBe(5);
    });

    it("migration 0023 makes the trigram indexes again on the text without spaces, partitioned or not", async () => {
      for (const partitions of [undefined, 4]) {
        const older = await freshDatabase("postgres", { migrate: false });
        try {
          const before = storeMigrations.findIndex(
            (migration) => migration.name === "0023-phrase-trigrams",
          );
          await migrateDatabase(older.database, storeMigrations.slice(0, before));
          if (partitions !== undefined) await partitionBySubject(older.database, partitions);
          const [a, b] = [word(), word()];
          await writeTexts(older.database, word(), [`${a} ${b}`, `${a} or ${b}`]);
          await migrateDatabase(older.database);
          const indexes = await sql<{ name: string; definition: string }>`
            select indexname as name, indexdef as definition from pg_indexes
            where schemaname = current_schema() and indexname like '%search_trgm%'
            order by indexname`.execute(older.database.db);
          const names = indexes.rows.map((row) => row.name);
          const parents = [
            "ai_gateway_messages_search_trgm",
            "background_agent_job_turn_items_search_trgm",
          ];
          expect(names).toEqual(
            partitions === undefined
              ? parents
              : parents
                  .flatMap((parent) => [
                    parent,
                    ...Array.from({ length: partitions }, (_, r) => `${parent}_p${String(r)}`),
                  ])
                  .sort(),
          );
          for (const row of indexes.rows) {
            expect(row.definition).toMatch(
              /gin \(replace\(\((content|item)\)::text, ' '::text, ''::text\)/,
            );
          }
          expect(await found(older.database, `${a} ${b}`)).toEqual([`${a} ${b}`]);
        } finally {
          await older.cleanup();
        }
      }
    });
  },
);
