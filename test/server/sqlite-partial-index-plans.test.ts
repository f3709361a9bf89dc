/**
 * Issue 33 (CPU per recorded call) and issue 34 item 3: on SQLite, the statements that rely on a
 * partial index say its condition in their own text. SQLite's planner uses a partial index only
 * when the statement implies the index's WHERE, which a bound parameter never does: a placing's
 * read of its subject's unplaced calls walked every call of the subject. Each statement is
 * captured as the store prepares it and its plan read with EXPLAIN QUERY PLAN.
 */
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listUnplacedCallIds } from "../../packages/server/src/store/repositories/recorded-calls.js";
import {
  claimOldBodyCalls,
  countOldBodyCalls,
} from "../../packages/server/src/store/repositories/recorded-bodies.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { freshDatabase, type FreshDatabase } from "../support/databases.js";

/** The SQL texts `work` prepares on the store's connection. */
async function preparedBy(work: () => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  const original = BetterSqlite3.prototype.prepare;
  const spy = vi.spyOn(BetterSqlite3.prototype, "prepare").mockImplementation(function (
    this: BetterSqlite3.Database,
    source: string,
  ) {
    texts.push(source);
    return original.call(this, source);
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return texts;
}

function planOf(path: string, text: string, values: readonly unknown[]): string {
  const connection = new BetterSqlite3(path, { readonly: true });
  try {
    const rows = connection.prepare(`explain query plan ${text}`).all(...values) as {
      detail: string;
    }[];
    return rows.map((row) => row.detail).join(" / ");
  } finally {
    connection.close();
  }
}

describe("partial indexes on SQLite", () => {
  let fresh: FreshDatabase;
  let database: StoreDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase("sqlite");
    database = fresh.database;
  });
  afterAll(async () => {
    await fresh?.cleanup();
  });

  it("issue 33: a placing reads its subject's unplaced calls through their partial index", async () => {
    const texts = await preparedBy(() => listUnplacedCallIds(database.db, "subject"));
    const statement = texts.find((text) => text.includes("ai_gateway_recorded_calls"));
    expect(statement).toBeDefined();
    const plan = planOf(fresh.locationText, statement as string, ["subject"]);
    expect(plan).toContain("ai_gateway_recorded_calls_unplaced");
    expect(plan).not.toContain("TEMP B-TREE");
  });

  it("issue 33: the conversion of old calls finds them through their partial index", async () => {
    for (const [name, work] of [
      ["claim", () => claimOldBodyCalls(database.db, database.capabilities, 100)],
      ["count", () => countOldBodyCalls(database.db)],
    ] as const) {
      const texts = await preparedBy(work);
      const statement = texts.find((text) => text.includes("ai_gateway_recorded_calls"));
      expect(statement, name).toBeDefined();
      const values = name === "claim" ? [100] : [];
      const plan = planOf(fresh.locationText, statement as string, values);
      expect(plan, name).toContain("ai_gateway_recorded_calls_storage");
    }
  });
});
