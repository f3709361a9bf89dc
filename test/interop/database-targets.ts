import { afterAll, beforeAll, describe } from "vitest";
import { bufferIO, main } from "../../packages/library/src/cli/index.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import {
  freshDatabase,
  postgresUrl,
  testDialects,
  type FreshDatabase,
} from "../support/databases.js";

/** What a test of a database target gets: the database, its `--into` text, and `verbatim`. */
export interface DatabaseTarget {
  /** The migrated database (opened in `beforeAll`: read it inside tests). */
  readonly database: StoreDatabase;
  /** `sqlite:<file>` or the PostgreSQL URL (with its schema). */
  readonly target: string;
  run(argv: string[]): Promise<{ code: number; out: string; err: string }>;
}

/**
 * Runs `body` once per dialect (PostgreSQL skipped without VERBATIM_PG_URL) against a fresh,
 * migrated database that the `verbatim` command reaches through `--into`.
 */
export function describeDatabaseTargets(
  name: string,
  body: (target: DatabaseTarget) => void,
): void {
  for (const dialect of testDialects) {
    const skip = dialect === "postgres" && postgresUrl === undefined;
    (skip ? describe.skip : describe)(`${name} [${dialect}]`, () => {
      let fresh: FreshDatabase | undefined;
      beforeAll(async () => {
        fresh = await freshDatabase(dialect);
      });
      afterAll(async () => fresh?.cleanup());
      const opened = (): FreshDatabase => {
        if (fresh === undefined) throw new Error("the database opens in beforeAll");
        return fresh;
      };
      body({
        get database() {
          return opened().database;
        },
        get target() {
          return dialect === "sqlite" ? `sqlite:${opened().locationText}` : opened().locationText;
        },
        async run(argv) {
          const io = bufferIO();
          const code = await main(argv, io);
          return { code, out: io.out().toString("utf8"), err: io.err() };
        },
      });
    });
  }
}
