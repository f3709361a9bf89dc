/**
 * Store tests on both dialects (docs/architecture.md: every store test runs on SQLite and on
 * PostgreSQL).
 *
 *   import { describeEachDialect } from "./databases.js";
 *
 *   describeEachDialect("message chains", (getDatabase, dialect) => {
 *     it("B4 reads the context of an anchor", async () => {
 *       const database = getDatabase(); // a migrated StoreDatabase
 *       …
 *     });
 *   });
 *
 * - The callback runs once per dialect inside `describe("<name> [sqlite]")` and
 *   `describe("<name> [postgres]")`. `getDatabase()` returns the database opened in
 *   `beforeAll` (call it inside tests and hooks, not while collecting).
 * - SQLite: a fresh file in a fresh temporary folder, removed afterwards.
 * - PostgreSQL: the server of `VERBATIM_PG_URL` (e.g. postgres://postgres@127.0.0.1:5432/test),
 *   in a fresh schema per describe block (`search_path`), so test files running in parallel
 *   never see each other's rows; the schema is dropped afterwards. Without `VERBATIM_PG_URL`
 *   the PostgreSQL block is skipped and a notice says so on stderr.
 * - Both are migrated with every migration of src/store/migrations before the tests run.
 * - The database is shared by the tests of the block: give each test its own subjects or
 *   conversations (e.g. `uniqueName("subject")`).
 * - `freshDatabase(dialect)` opens one outside a describe block (for child processes: its
 *   `location` and `locationText` name the same database, schema included).
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe } from "vitest";
import {
  openDatabase,
  type StatementObserver,
  type StoreDatabase,
} from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { partitionBySubject } from "../../packages/server/src/store/partitions.js";

export type TestDialect = "sqlite" | "postgres";

export const postgresUrl: string | undefined = process.env["VERBATIM_PG_URL"] || undefined;

/**
 * With `VERBATIM_TEST_PG_PARTITIONS=<N>`, every PostgreSQL database the tests migrate has its
 * subject-owned tables hash-partitioned by subject into N partitions (the suite's second
 * PostgreSQL pass in CI, docs/scale.md "Partitions").
 */
export const testPartitions: number | undefined =
  Number(process.env["VERBATIM_TEST_PG_PARTITIONS"] ?? "") || undefined;

/**
 * The dialects the store tests run on: both, or those `VERBATIM_TEST_DIALECTS` names
 * (`postgres` for the suite's partitioned PostgreSQL pass, docs/scale.md "Partitions").
 */
export const testDialects: readonly TestDialect[] = (["sqlite", "postgres"] as const).filter(
  (dialect) =>
    (process.env["VERBATIM_TEST_DIALECTS"] || "sqlite,postgres").split(",").includes(dialect),
);

let noticeShown = false;
/** The notice (once per file) that PostgreSQL cases are skipped, naming the first of them. */
export function showSkipNotice(name: string): void {
  if (noticeShown) return;
  noticeShown = true;
  process.stderr.write(
    `\n[notice] VERBATIM_PG_URL is not set: PostgreSQL cases are SKIPPED (first: "${name}"). ` +
      "Run with VERBATIM_PG_URL=postgres://postgres@127.0.0.1:5432/test to include them.\n\n",
  );
}

/** A name no other test uses: `prefix_<12 hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/**
 * With `VERBATIM_TEST_STATEMENT_LOG=<file>`, every database the tests open appends each distinct
 * statement it runs to that file, one JSON string a line (to audit which statements name the
 * subject: `node bin/run-ts.js scripts/statements-without-subject.ts <file>`).
 */
const statementLog = process.env["VERBATIM_TEST_STATEMENT_LOG"] || undefined;
const loggedStatements = new Set<string>();
function logStatement(text: string): void {
  if (statementLog === undefined || loggedStatements.has(text)) return;
  loggedStatements.add(text);
  appendFileSync(statementLog, `${JSON.stringify(text)}\n`);
}
const sharedStatementOptions = statementLog === undefined ? {} : { onStatement: logStatement };

export interface FreshDatabase {
  readonly database: StoreDatabase;
  readonly location: DatabaseLocation;
  /**
   * The location as `--db` text for a child process: the file path, or the URL with the
   * schema as `options=-c search_path=…` (which pg and the CLI understand).
   */
  readonly locationText: string;
  /** Closes the database and removes its file or schema. */
  cleanup(): Promise<void>;
}

/** Opens and migrates a fresh database of the dialect (PostgreSQL needs VERBATIM_PG_URL). */
export async function freshDatabase(
  dialect: TestDialect,
  options: {
    readonly migrate?: boolean;
    /** Told every statement the database runs (besides VERBATIM_TEST_STATEMENT_LOG). */
    readonly onStatement?: StatementObserver;
  } = {},
): Promise<FreshDatabase> {
  const own = options.onStatement;
  const statementOptions =
    own === undefined
      ? sharedStatementOptions
      : {
          onStatement: (text: string, values?: readonly unknown[]) => {
            own(text, values);
            logStatement(text);
          },
        };
  if (dialect === "sqlite") {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-store-"));
    const path = join(folder, "store.sqlite");
    const location: DatabaseLocation = { dialect: "sqlite", path };
    const database = await openDatabase(location, statementOptions);
    if (options.migrate !== false) await migrateDatabase(database);
    return {
      database,
      location,
      locationText: path,
      async cleanup() {
        await database.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  if (postgresUrl === undefined) throw new Error("freshDatabase(postgres) needs VERBATIM_PG_URL");
  const url = postgresUrl;
  const schema = uniqueName(`verbatim_test_${process.pid}`);
  await withAdminClient(url, (client) => client.query(`create schema ${schema}`));
  const location: DatabaseLocation = { dialect: "postgres", url, schema };
  const database = await openDatabase(location, { poolSize: 4, ...statementOptions });
  if (options.migrate !== false) {
    await migrateDatabase(database);
    if (testPartitions !== undefined) await partitionBySubject(database, testPartitions);
  }
  const separator = url.includes("?") ? "&" : "?";
  return {
    database,
    location,
    locationText: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async cleanup() {
      await database.close();
      await withAdminClient(url, (client) => client.query(`drop schema ${schema} cascade`));
    },
  };
}

/** Runs `work` on a client of its own, connected to `url` (creating and dropping schemas, databases). */
export async function withAdminClient<T>(url: string, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Declares `describe("<name> [<dialect>]", …)` once per dialect with a fresh migrated database
 * for the block. PostgreSQL is skipped with a notice when VERBATIM_PG_URL is unset.
 */
export function describeEachDialect(
  name: string,
  body: (getDatabase: () => StoreDatabase, dialect: TestDialect) => void,
): void {
  for (const dialect of testDialects) {
    const title = `${name} [${dialect}]`;
    if (dialect === "postgres" && postgresUrl === undefined) {
      showSkipNotice(title);
      describe.skip(`${title} (skipped: VERBATIM_PG_URL is not set)`, () => {
        body(() => {
          throw new Error("skipped");
        }, dialect);
      });
      continue;
    }
    describe(title, () => {
      let fresh: FreshDatabase | undefined;
      beforeAll(async () => {
        fresh = await freshDatabase(dialect);
      });
      afterAll(async () => {
        await fresh?.cleanup();
      });
      body(() => {
        if (fresh === undefined) throw new Error("the test database is not open yet");
        return fresh.database;
      }, dialect);
    });
  }
}
