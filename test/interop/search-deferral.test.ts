import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bufferIO, main } from "../../packages/library/src/cli/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  searchConsole,
  type SearchKey,
} from "../../packages/server/src/store/repositories/console-search.js";
import {
  catchUpSearchIndex,
  checkSearchIndex,
  deferSearchIndex,
} from "../../packages/server/src/store/search-deferral.js";
import {
  SEARCH_INDEX_HASH_BYTES,
  SEARCH_INDEXES,
} from "../../packages/server/src/store/search-indexes.js";
import { freshDatabase, type FreshDatabase } from "../support/databases.js";
import { fixturesRoot } from "./fixture-files.js";

// Issue 19: an import into SQLite leaves its rows out of the console's search index while it
// runs and leaves them pending when it returns (store/search-deferral.ts); they are indexed
// afterwards (a server in the background, `verbatim db index`, `db migrate`), and search finds
// them all along: the rows the index does not hold are matched by a scan with the index's fold
// (console-search.ts). The FTS5 index always matches its table (integrity-check).

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Texts of the rows an import leaves pending, each found by the queries beside it. */
const TEXTS = [
  {
    subject: "ascii",
    text: "An answer about Quokkas and WOMBATS",
    queries: ["quokkas", "QUOKKAS", "Wombats"],
  },
  { subject: "german", text: "Grüße aus MÜNCHEN, Straße", queries: ["münchen", "GRÜ", "müNCHEN"] },
  { subject: "japanese", text: "東京の天気は晴れです", queries: ["天気は晴れ", "東京の"] },
  { subject: "emoji", text: "a kangaroo 🦘 hops", queries: ["🦘 hops", "🦘"] },
  {
    subject: "escaped",
    text: 'she said "hi" in C:\\temp\\dir',
    queries: ['said "hi"', "C:\\temp", '"h'],
  },
  { subject: "short", text: "qz and xj", queries: ["qz", "Xj"] },
  { subject: "greek", text: "ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ", queries: ["οδυσσευς", "σοφος"] },
] as const;

describe("the search index of rows an import left pending (issue 19)", () => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    fresh = await freshDatabase("sqlite");
  });
  afterEach(async () => fresh.cleanup());

  const path = () => (fresh.location.dialect === "sqlite" ? fresh.location.path : "");
  // Through the index (and the scan of pending rows); the first try among the newest rows must
  // find the same.
  const hits = async (query: string, limit = 50, after?: SearchKey) => {
    const { db, capabilities } = fresh.database;
    const indexed = await searchConsole(db, capabilities, { query, limit, after, probeRows: 0 });
    expect(await searchConsole(db, capabilities, { query, limit, after }), query).toEqual(indexed);
    return indexed;
  };
  const search = async (query: string) => (await hits(query)).map((row) => row.subject_uid);
  const messages = async () =>
    (await checkSearchIndex(fresh.database)).find((entry) => entry.table === "ai_gateway_messages");
  const append = (subject: string, text: string) =>
    new GatewayMessageStore(fresh.database).appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text }] }],
    });

  it("an import returns with its rows pending; search finds them before and after the catch-up", async () => {
    const io = bufferIO();
    const code = await main(
      [
        "import",
        "claude-code",
        `${fixturesRoot}claude-code/2.1-subagents`,
        "--into",
        `sqlite:${path()}`,
        "--subject",
        "importer",
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    const state = await messages();
    expect(state?.rows).toBeGreaterThan(10);
    expect(state).toMatchObject({ indexed: 0, deferrals: 1 });
    // Words of the session's first prompt, as written and in other cases.
    const queries = [
      "create specification for adding missing CLI commands",
      "CREATE SPECIFICATION for adding",
      "Missing Cli",
    ];
    const before = await Promise.all(queries.map((query) => hits(query)));
    for (const found of before) expect(found.map((row) => row.subject_uid)).toContain("importer");
    await catchUpSearchIndex(fresh.database);
    expect(await messages()).toMatchObject({ indexed: state?.rows, deferrals: 0 });
    expect(await Promise.all(queries.map((query) => hits(query)))).toEqual(before);
  });

  it("job items an import left pending are found too (the items' index), before and after the catch-up", async () => {
    const io = bufferIO();
    const code = await main(
      [
        "import",
        "swe-agent",
        `${fixturesRoot}swe-agent/function_calling_simple.traj`,
        "--into",
        `sqlite:${path()}`,
        "--subject",
        "agent",
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    const items = async () =>
      (await checkSearchIndex(fresh.database)).find(
        (entry) => entry.table === "background_agent_job_turn_items",
      );
    const state = await items();
    expect(state?.rows).toBeGreaterThan(0);
    expect(state).toMatchObject({ indexed: 0, deferrals: 1 });
    const before = await hits("MISSING_COLON.PY");
    expect(before.filter((row) => row.kind === "item").length).toBeGreaterThan(0);
    await catchUpSearchIndex(fresh.database);
    expect(await items()).toMatchObject({ indexed: state?.rows, deferrals: 0 });
    expect(await hits("MISSING_COLON.PY")).toEqual(before);
  });

  it("ASCII, other cases, Japanese, emoji, quotes and backslashes, short text: the same rows pending and indexed, once each, in the same order", async () => {
    // The same texts indexed already (before the deferral) and pending (after it).
    for (const { subject, text } of TEXTS) await append(`${subject}-indexed`, text);
    const deferral = await deferSearchIndex(fresh.database);
    for (const { subject, text } of TEXTS) await append(`${subject}-pending`, text);
    await deferral.finish();
    expect(await messages()).toMatchObject({
      rows: TEXTS.length * 2,
      indexed: TEXTS.length,
      deferrals: 1,
    });
    const everyQuery = TEXTS.flatMap((entry) =>
      entry.queries.map((query) => ({ ...entry, query })),
    );
    const before = new Map<string, Awaited<ReturnType<typeof hits>>>();
    for (const { subject, query } of everyQuery) {
      const found = await hits(query);
      const ids = found.map((row) => row.id);
      expect(new Set(ids).size, query).toBe(ids.length);
      expect(found.map((row) => row.subject_uid).sort(), query).toEqual(
        expect.arrayContaining([`${subject}-indexed`, `${subject}-pending`]),
      );
      // Each pending row found once, as its indexed twin is.
      expect(
        found.filter((row) => row.subject_uid === `${subject}-pending`),
        query,
      ).toHaveLength(1);
      before.set(query, found);
    }
    // Paging over indexed and pending rows together: newest first, no row twice.
    const firstPage = await hits("type", 3);
    const last = firstPage[2];
    if (last === undefined) throw new Error("a first page of 3");
    const secondPage = await hits("type", 3, [last.created_at, last.parent_id, last.id, last.kind]);
    expect(firstPage.map((row) => row.id)).not.toEqual(
      expect.arrayContaining(secondPage.map((row) => row.id)),
    );
    const pages = [...firstPage, ...secondPage].map((row) => row.id);
    expect((await hits("type", 6)).map((row) => row.id)).toEqual(pages);
    expect(await hits("type", 100)).toHaveLength(TEXTS.length * 2);
    // Text no row holds is not found, pending or not.
    expect(await search("kangaroos")).toEqual([]);
    await catchUpSearchIndex(fresh.database);
    expect(await messages()).toMatchObject({
      rows: TEXTS.length * 2,
      indexed: TEXTS.length * 2,
      deferrals: 0,
    });
    for (const { query } of everyQuery) expect(await hits(query), query).toEqual(before.get(query));
    expect((await hits("type", 6)).map((row) => row.id)).toEqual(pages);
  });

  it("rows other writers insert while an import runs wait with its own; after it returns, the triggers index new rows at once", async () => {
    await append("before", "indexed at once by the trigger");
    const deferral = await deferSearchIndex(fresh.database);
    await append("during", "an answer about quokkas written while deferred");
    expect(await messages()).toMatchObject({ rows: 2, indexed: 1, deferrals: 1 });
    expect(await search("quokkas")).toEqual(["during"]);
    await deferral.finish();
    await append("after", "the trigger indexes again: pangolins");
    expect(await messages()).toMatchObject({ rows: 3, indexed: 2, deferrals: 1 });
    expect(await search("pangolins")).toEqual(["after"]);
    expect(await search("quokkas")).toEqual(["during"]);
    expect(await catchUpSearchIndex(fresh.database)).toMatchObject({ rows: 1, deferrals: 2 });
    expect(await messages()).toMatchObject({ rows: 3, indexed: 3, deferrals: 0 });
    expect(await search("quokkas")).toEqual(["during"]);
  });

  it("finish({ index: true }) (import --index-now) indexes the rows before it returns", async () => {
    const deferral = await deferSearchIndex(fresh.database);
    await append("now", "indexed before the import returns: okapis");
    await deferral.finish({ index: true });
    expect(await messages()).toMatchObject({ rows: 1, indexed: 1, deferrals: 0 });
    expect(await search("OKAPIS")).toEqual(["now"]);
  });

  it("a row rewritten while pending (indexed or not) leaves the index matching its table", async () => {
    const [indexed] = await append("rewrite", "first text of an indexed row: walrus");
    const deferral = await deferSearchIndex(fresh.database);
    const [waiting] = await append("rewrite", "first text of a waiting row: narwhal");
    await deferral.finish();
    for (const [row, text] of [
      [indexed, "second text of the indexed row: albatross"],
      [waiting, "second text of the waiting row: cormorant"],
    ] as const) {
      await fresh.database.db
        .updateTable("ai_gateway_messages")
        .set({ content: JSON.stringify([{ type: "text", text }]) })
        .where("id", "=", row?.id ?? "")
        .execute();
    }
    for (const [query, found] of [
      ["walrus", []],
      ["narwhal", []],
      ["albatross", ["rewrite"]],
      ["cormorant", ["rewrite"]],
    ] as const)
      expect(await search(query), query).toEqual(found);
    await catchUpSearchIndex(fresh.database);
    // checkSearchIndex runs FTS5's integrity-check, which throws on a mismatch.
    expect(await messages()).toMatchObject({ rows: 2, indexed: 2, deferrals: 0 });
    expect(await search("walrus")).toEqual([]);
    expect(await search("narwhal")).toEqual([]);
    expect(await search("albatross")).toEqual(["rewrite"]);
    expect(await search("cormorant")).toEqual(["rewrite"]);
  });

  it("an import that died mid-way (deferral live, its process gone) is found meanwhile and ends indexed", async () => {
    const child = spawnSync(
      process.execPath,
      [
        "bin/run-ts.js",
        "test/interop/search-deferral-child.ts",
        path(),
        "left by a dead import: okapi",
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(await messages()).toMatchObject({ rows: 1, indexed: 0, deferrals: 1 });
    expect(await search("OKAPI")).toEqual(["crashed-import"]);
    // Its lease has not run out: other writers' rows wait too, until the catch-up ends it.
    await append("meanwhile", "written while the dead lease looked live: tapir");
    expect(await catchUpSearchIndex(fresh.database)).toMatchObject({ rows: 2, deferrals: 2 });
    await append("later", "indexed by the trigger: capybara");
    expect(await messages()).toMatchObject({ rows: 3, indexed: 3, deferrals: 0 });
    expect(await search("okapi")).toEqual(["crashed-import"]);
    expect(await search("tapir")).toEqual(["meanwhile"]);
    expect(await search("capybara")).toEqual(["later"]);
  });

  it("a running import's deferral is left to it; the catch-up in small steps ends the pending ones", async () => {
    const first = await deferSearchIndex(fresh.database);
    for (let index = 0; index < 30; index++)
      await append(`first-${index}`, `row ${index} of the first`);
    await first.finish();
    const second = await deferSearchIndex(fresh.database);
    await append("second", "row of the second import, still running");
    const report = await catchUpSearchIndex(fresh.database, { rows: 7, bytes: 1 });
    // One row per transaction (the byte bound), the row of the running import included (the
    // range ends at the last row when it starts); then one per table removing its deferral.
    expect(report).toMatchObject({ rows: 31, deferrals: 2, transactions: 33 });
    expect(await messages()).toMatchObject({ rows: 31, deferrals: 1 });
    expect(await search("still running")).toEqual(["second"]);
    await second.finish();
    await catchUpSearchIndex(fresh.database);
    expect(await messages()).toMatchObject({ rows: 31, indexed: 31, deferrals: 0 });
  });

  it("migration 0014 lets each index keep 16 MiB of new data in memory per transaction, and search still finds rows", async () => {
    for (const { index } of SEARCH_INDEXES) {
      const rows = await sql<{ v: number }>`select v from ${sql.table(`${index}_config`)}
        where k = 'hashsize'`.execute(fresh.database.db);
      expect(rows.rows).toEqual([{ v: SEARCH_INDEX_HASH_BYTES }]);
    }
    const deferral = await deferSearchIndex(fresh.database);
    for (let index = 0; index < 50; index++)
      await append(`subject-${index}`, `row ${index} of aardvarks`);
    await deferral.finish({ index: true });
    expect(await messages()).toMatchObject({ rows: 50, indexed: 50, deferrals: 0 });
    expect(await search("row 17 of aardvarks")).toEqual(["subject-17"]);
  });
});
