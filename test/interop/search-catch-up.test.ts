/**
 * Issue 19: the rows an import leaves for the console's search index are indexed afterwards,
 * and search finds them all along. Here: the scan's fold is the index's (derived again from the
 * SQLite this process links); `verbatim db index`, `db migrate` and `import --index-now` index
 * them at once; a server started on a store with pending rows answers /healthz and finds them
 * while it indexes them in the background, and picks up an import made while it runs.
 */
import BetterSqlite3 from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bufferIO, main } from "../../packages/library/src/cli/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { startServer } from "../../packages/server/src/server/serve.js";
import {
  type CatchUpPace,
  catchUpSearchIndex,
  checkSearchIndex,
  deferSearchIndex,
  SERVER_CATCH_UP_PACE,
} from "../../packages/server/src/store/search-deferral.js";
import { searchFold } from "../../packages/server/src/store/search-fold.js";
import { freshDatabase, type FreshDatabase } from "../support/databases.js";
import { fixturesRoot } from "./fixture-files.js";

describe("the scan's case fold (store/search-fold.ts)", () => {
  it("folds every code point of planes 0 and 1 as the FTS5 trigram index does", () => {
    const db = new BetterSqlite3(":memory:");
    db.exec(`create virtual table s using fts5(c, tokenize='trigram');
      create virtual table v using fts5vocab(s, 'instance');`);
    const insert = db.prepare("insert into s(rowid, c) values (?, ?)");
    db.transaction(() => {
      for (let code = 1; code <= 0x1ffff; code++) {
        if (code >= 0xd800 && code <= 0xdfff) continue;
        const char = String.fromCodePoint(code);
        insert.run(code, char.repeat(3));
      }
    })();
    const differ: string[] = [];
    for (const row of db.prepare("select doc, term from v").iterate() as Iterable<{
      doc: number;
      term: string;
    }>) {
      const folded = [...row.term][0] ?? "";
      if (searchFold(String.fromCodePoint(row.doc)) !== folded)
        differ.push(`U+${row.doc.toString(16)} -> U+${folded.codePointAt(0)?.toString(16)}`);
    }
    db.close();
    expect(differ).toEqual([]);
    expect(searchFold("Grüße aus MÜNCHEN ſ K ΟΔΥΣΣΕΥΣ 東京 🦘")).toBe(
      "grüße aus münchen s k οδυσσευσ 東京 🦘",
    );
  });
});

describe("indexing pending rows at once, and a server catching up (issue 19)", () => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    fresh = await freshDatabase("sqlite");
  });
  afterEach(async () => fresh.cleanup());

  const path = () => (fresh.location.dialect === "sqlite" ? fresh.location.path : "");
  const state = async () => {
    const checked = await checkSearchIndex(fresh.database);
    return {
      rows: checked.reduce((sum, entry) => sum + entry.rows, 0),
      indexed: checked.reduce((sum, entry) => sum + entry.indexed, 0),
      deferrals: checked.reduce((sum, entry) => sum + entry.deferrals, 0),
    };
  };
  const run = async (args: string[]) => {
    const io = bufferIO();
    const code = await main(args, io);
    return { code, out: io.out().toString(), err: io.err() };
  };
  /**
   * `count` rows pending after an import's end (indexed by the triggers in one statement with
   * `indexed`), each ~`size` bytes, one of them holding `marker`, their ids `${prefix}-i`.
   */
  async function pendingRows(
    count: number,
    marker: string,
    size = 600,
    { prefix = "bulk", indexed = false } = {},
  ): Promise<void> {
    const store = new GatewayMessageStore(fresh.database);
    const deferral = indexed ? undefined : await deferSearchIndex(fresh.database);
    const [first] = await store.appendMessages(prefix, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "the first of the bulk rows" }] }],
    });
    const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(size / 27)).slice(0, size);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count - 1})
      insert into ai_gateway_messages (id, subject_uid, conversation_id, previous_message_id, type,
        role, status, content, metadata, branch_id, depth, context_start_depth, created_at,
        updated_at)
      select ${prefix} || '-' || i, subject_uid, conversation_id, null, type, role, status,
        json_array(json_object('type', 'text', 'text',
          case when i = ${Math.floor(count / 2)} then ${marker} else 'row ' || i || ' ' || ${filler} end)),
        metadata, branch_id, depth + i, context_start_depth, created_at, updated_at
      from ai_gateway_messages, n where id = ${first?.id ?? ""}`.execute(fresh.database.db);
    await deferral?.finish();
  }

  it("verbatim db index --db <file> [--json] indexes the pending rows; again, nothing is left", async () => {
    await pendingRows(300, "the marker row: axolotl");
    expect(await state()).toMatchObject({ rows: 300, indexed: 0, deferrals: 2 });
    const first = await run(["db", "index", "--db", path(), "--json"]);
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toEqual({
      database: path(),
      dialect: "sqlite",
      indexedRows: 300,
      deferralsEnded: 2,
      deferralsLeft: 0,
    });
    expect(await state()).toMatchObject({ rows: 300, indexed: 300, deferrals: 0 });
    const again = await run(["db", "index", "--db", path()]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe(`${path()}: indexed 0 row(s) for search; search index up to date\n`);
    const missing = await run(["db", "index", "--db", `${path()}.missing`]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/does not exist/);
    const usage = await run(["db", "index"]);
    expect(usage.err).toMatch(/--db is required/);
  });

  it("verbatim db migrate indexes the pending rows too", async () => {
    await pendingRows(50, "the marker row: axolotl");
    const migrated = await run(["db", "migrate", "--db", path()]);
    expect(migrated.code, migrated.err).toBe(0);
    expect(await state()).toMatchObject({ rows: 50, indexed: 50, deferrals: 0 });
  });

  it("verbatim import … --into sqlite: --index-now returns with every row indexed; without it they are pending", async () => {
    const folder = `${fixturesRoot}claude-code/2.1-subagents`;
    const importAs = (subject: string, ...extra: string[]) =>
      run([
        "import",
        "claude-code",
        folder,
        "--into",
        `sqlite:${path()}`,
        "--subject",
        subject,
        ...extra,
      ]);
    const pending = await importAs("a");
    expect(pending.code, pending.err).toBe(0);
    expect((await state()).deferrals).toBe(2);
    const now = await importAs("b", "--index-now");
    expect(now.code, now.err).toBe(0);
    // --index-now indexes every pending row, the earlier import's included.
    const after = await state();
    expect(after).toMatchObject({ indexed: after.rows, deferrals: 0 });
    // Not with a package target, where there is no such index.
    const packages = await run([
      "import",
      "claude-code",
      folder,
      "--into",
      `${path()}-packages`,
      "--index-now",
    ]);
    expect(packages.code).toBe(2);
    expect(packages.err).toMatch(/--index-now goes with a database target/);
  });

  it("the server's pace merges the index in steps of its own: level 0 never reaches crisismerge (16 segments), which FTS5 would merge at once inside one commit", async () => {
    // Large segments on level 0 (one statement indexed by the triggers), then rows pending.
    await pendingRows(5000, "indexed: axolotl", 1000, { prefix: "indexed", indexed: true });
    const segments = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(distinct segid) as n from ai_gateway_messages_search_idx`.execute(
            fresh.database.db,
          )
        ).rows[0]?.n,
      );
    const catchUp = async (pace: CatchUpPace) => {
      let most = 0;
      const report = await catchUpSearchIndex(fresh.database, {
        ...pace,
        pause: async () => {
          most = Math.max(most, await segments());
        },
      });
      return { report, most };
    };
    await pendingRows(5000, "pending: quetzal", 1000, { prefix: "first" });
    // Without merge steps (FTS5's automerge alone), the segments pile up to a crisis merge.
    const alone = await catchUp({
      rows: SERVER_CATCH_UP_PACE.rows,
      bytes: SERVER_CATCH_UP_PACE.bytes,
    });
    expect(alone.report).toMatchObject({ rows: 5000, deferrals: 2 });
    expect(alone.most).toBeGreaterThanOrEqual(16);
    await pendingRows(5000, "pending: okapi", 1000, { prefix: "second" });
    const paced = await catchUp(SERVER_CATCH_UP_PACE);
    expect(paced.report).toMatchObject({ rows: 5000, deferrals: 2 });
    expect(paced.most).toBeLessThan(12);
    expect(await state()).toMatchObject({ rows: 15_000, indexed: 15_000, deferrals: 0 });
  }, 60_000);

  it("a server started on a store with pending rows answers /healthz while it indexes them, search finds them throughout, and it picks up an import made while it runs", async () => {
    await pendingRows(20_000, "the marker row: axolotl", 1000);
    const server = await startServer({
      database: path(),
      port: 0,
      env: { VERBATIM_WEB_BUILD: "off", VERBATIM_OPERATOR_TOKEN: "vop_catch-up-test" },
    });
    const headers = { authorization: "Bearer vop_catch-up-test" };
    const searchHits = async (query: string) => {
      const reply = await fetch(`${server.url}/ai-gateway/search?q=${encodeURIComponent(query)}`, {
        headers,
      });
      expect(reply.status).toBe(200);
      return ((await reply.json()) as { data: { message_id: string | null }[] }).data;
    };
    try {
      let answeredWhilePending = 0;
      let slowest = 0;
      for (;;) {
        const started = performance.now();
        const health = await fetch(`${server.url}/healthz`);
        slowest = Math.max(slowest, performance.now() - started);
        expect(health.status).toBe(200);
        const now = await state();
        expect((await searchHits("AXOLOTL")).map((hit) => hit.message_id)).toEqual([
          `bulk-${10_000}`,
        ]);
        if (now.deferrals === 0) break;
        answeredWhilePending++;
      }
      expect(answeredWhilePending).toBeGreaterThan(0);
      // Each of its transactions indexes 128 KiB at most: /healthz waits for one at most.
      expect(slowest).toBeLessThan(1000);
      expect(await state()).toMatchObject({ rows: 20_000, indexed: 20_000, deferrals: 0 });
      // An import into the store while the server runs: pending when it returns, then indexed
      // at the server's next look (every 3 s).
      const deferral = await deferSearchIndex(fresh.database);
      await new GatewayMessageStore(fresh.database).appendMessages("late", {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "imported late: quetzal" }] }],
      });
      await deferral.finish();
      expect(await searchHits("Quetzal")).toHaveLength(1);
      const deadline = Date.now() + 10_000;
      while ((await state()).deferrals > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await state()).toMatchObject({ rows: 20_001, indexed: 20_001, deferrals: 0 });
      expect(await searchHits("Quetzal")).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 60_000);
});
