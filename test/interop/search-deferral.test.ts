import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bufferIO, main } from "../../packages/library/src/cli/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/message-store.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { searchConsole } from "../../packages/server/src/store/repositories/console-search.js";
import {
  checkSearchIndex,
  deferSearchIndex,
} from "../../packages/server/src/store/search-deferral.js";
import {
  SEARCH_INDEX_HASH_BYTES,
  SEARCH_INDEXES,
} from "../../packages/server/src/store/search-indexes.js";
import { freshDatabase, type FreshDatabase } from "../support/databases.js";
import { fixturesRoot } from "./fixture-files.js";

// Issue 19: an import into SQLite indexes its rows for the console's search once at the end
// instead of row by row (store/search-deferral.ts): search finds everything when the command
// returns, other writers' rows are not lost, an import that dies is caught up, and the FTS5
// index always matches its table (integrity-check).

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("the search index during a bulk import into SQLite (issue 19)", () => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    fresh = await freshDatabase("sqlite");
  });
  afterEach(async () => fresh.cleanup());

  const search = async (query: string) =>
    (
      await searchConsole(fresh.database.db, fresh.database.capabilities, {
        query,
        limit: 10,
        offset: 0,
      })
    ).map((row) => row.subject_uid);
  const messages = async () =>
    (await checkSearchIndex(fresh.database)).find((entry) => entry.table === "ai_gateway_messages");
  const append = (subject: string, text: string) =>
    new GatewayMessageStore(fresh.database).appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text }] }],
    });

  it("every message an import wrote is in the index when the command returns, and search finds it", async () => {
    const io = bufferIO();
    const code = await main(
      [
        "import",
        "claude-code",
        `${fixturesRoot}claude-code/2.1-subagents`,
        "--into",
        `sqlite:${fresh.location.dialect === "sqlite" ? fresh.location.path : ""}`,
        "--subject",
        "importer",
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    const state = await messages();
    expect(state?.rows).toBeGreaterThan(10);
    expect(state).toMatchObject({ indexed: state?.rows, deferrals: 0 });
    // Words of the session's first prompt.
    expect(await search("create specification for adding missing CLI commands")).toContain(
      "importer",
    );
  });

  it("rows inserted while the index is deferred wait for finish, which indexes them all", async () => {
    await append("before", "indexed at once by the trigger");
    const deferral = await deferSearchIndex(fresh.database);
    await append("during", "an answer about quokkas written while deferred");
    expect(await messages()).toMatchObject({ rows: 2, indexed: 1, deferrals: 1 });
    expect(await search("quokkas")).toEqual([]);
    await deferral.finish();
    expect(await messages()).toMatchObject({ rows: 2, indexed: 2, deferrals: 0 });
    expect(await search("quokkas")).toEqual(["during"]);
    await append("after", "the trigger indexes again: pangolins");
    expect(await search("pangolins")).toEqual(["after"]);
  });

  it("a row rewritten while deferred (indexed or not) leaves the index matching its table", async () => {
    const [indexed] = await append("rewrite", "first text of an indexed row: walrus");
    const deferral = await deferSearchIndex(fresh.database);
    const [waiting] = await append("rewrite", "first text of a waiting row: narwhal");
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
    await deferral.finish();
    // checkSearchIndex runs FTS5's integrity-check, which throws on a mismatch.
    expect(await messages()).toMatchObject({ rows: 2, indexed: 2, deferrals: 0 });
    expect(await search("walrus")).toEqual([]);
    expect(await search("narwhal")).toEqual([]);
    expect(await search("albatross")).toEqual(["rewrite"]);
    expect(await search("cormorant")).toEqual(["rewrite"]);
  });

  it("an import that died is caught up by the next migrate (the next import or serve)", async () => {
    const path = fresh.location.dialect === "sqlite" ? fresh.location.path : "";
    const child = spawnSync(
      process.execPath,
      [
        "bin/run-ts.js",
        "test/interop/search-deferral-child.ts",
        path,
        "left by a dead import: okapi",
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(await messages()).toMatchObject({ rows: 1, indexed: 0, deferrals: 1 });
    expect(await search("okapi")).toEqual([]);
    await migrateDatabase(fresh.database);
    expect(await messages()).toMatchObject({ rows: 1, indexed: 1, deferrals: 0 });
    expect(await search("okapi")).toEqual(["crashed-import"]);
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
    await deferral.finish();
    expect(await messages()).toMatchObject({ rows: 50, indexed: 50, deferrals: 0 });
    expect(await search("row 17 of aardvarks")).toEqual(["subject-17"]);
  });
});
