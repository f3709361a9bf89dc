import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freshDatabase, postgresUrl, testDialects } from "../../../../../test/support/databases.js";
import { openDatabase } from "../../store/database.js";
import { appliedMigrations } from "../../store/migrate.js";
import { storeMigrations } from "../../store/migrations/index.js";
import { bufferIO, main } from "verbatim-llm/cli";

const run = promisify(execFile);
const names = storeMigrations.map((migration) => migration.name);
const root = new URL("../../../../../", import.meta.url).pathname;

describe("verbatim db migrate", () => {
  for (const dialect of testDialects) {
    it.skipIf(dialect === "postgres" && postgresUrl === undefined)(
      `B1 migrates a new database, then finds it up to date [${dialect}]`,
      async () => {
        const fresh = await freshDatabase(dialect, { migrate: false });
        try {
          const first = bufferIO();
          expect(await main(["db", "migrate", "--db", fresh.locationText, "--json"], first)).toBe(
            0,
          );
          const report = JSON.parse(first.out().toString()) as Record<string, unknown>;
          expect(Object.keys(report)).toEqual(["database", "dialect", "applied", "current"]);
          expect(report["dialect"]).toBe(dialect);
          expect(report["applied"]).toEqual(names);
          expect(report["current"]).toEqual(names);
          expect(await appliedMigrations(fresh.database)).toEqual(names);

          const second = bufferIO();
          expect(await main(["db", "migrate", "--db", fresh.locationText], second)).toBe(0);
          expect(second.out().toString()).toContain("up to date");
          expect(second.err()).toBe("");
        } finally {
          await fresh.cleanup();
        }
      },
    );
  }

  it(
    "creates the SQLite file when missing, run as a child process",
    { timeout: 60_000 },
    async () => {
      const folder = mkdtempSync(join(tmpdir(), "verbatim-cli-"));
      try {
        const path = join(folder, "new.sqlite");
        const { stdout } = await run(
          process.execPath,
          ["bin/verbatim.js", "db", "migrate", "--db", path, "--json"],
          { cwd: root },
        );
        expect(JSON.parse(stdout)).toMatchObject({ dialect: "sqlite", applied: names });
        const database = await openDatabase({ dialect: "sqlite", path });
        expect(await appliedMigrations(database)).toEqual(names);
        await database.close();
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );

  it("exits 2 without --db, with a bad URL scheme or a missing folder", async () => {
    for (const argv of [
      ["db", "migrate"],
      ["db", "migrate", "--db", "mysql://localhost/x"],
      ["db", "migrate", "--db", "/no/such/folder/store.sqlite"],
      ["db", "migrate", "--db", "x.sqlite", "extra"],
    ]) {
      const io = bufferIO();
      expect(await main(argv, io), argv.join(" ")).toBe(2);
      expect(io.err()).toMatch(/^verbatim db migrate: /);
      expect(io.err()).not.toMatch(/\n\s+at /);
    }
  });

  it("exits 1 on a database written by a newer verbatim, changing nothing", async () => {
    const fresh = await freshDatabase("sqlite");
    try {
      await fresh.database.db
        .insertInto("verbatim_migrations")
        .values({ name: "9999-from-the-future", applied_at: new Date().toISOString() })
        .execute();
      const io = bufferIO();
      expect(await main(["db", "migrate", "--db", fresh.locationText], io)).toBe(1);
      expect(io.err()).toContain("9999-from-the-future");
      expect(io.err()).toContain("Upgrade verbatim");
      expect(await appliedMigrations(fresh.database)).toEqual([...names, "9999-from-the-future"]);
    } finally {
      await fresh.cleanup();
    }
  });

  it("exits 1 when PostgreSQL refuses the connection, without the password", async () => {
    const io = bufferIO();
    const code = await main(
      ["db", "migrate", "--db", "postgres://someone:secret@127.0.0.1:1/none"],
      io,
    );
    expect(code).toBe(1);
    expect(io.err()).toContain("cannot open the database");
    expect(io.err()).not.toContain("secret");
  });

  it.skipIf(postgresUrl === undefined)(
    "B1 several processes migrating one PostgreSQL schema at once all succeed, each migration applied once",
    async () => {
      const fresh = await freshDatabase("postgres", { migrate: false });
      try {
        const results = await Promise.all(
          Array.from({ length: 4 }, () =>
            run(
              process.execPath,
              ["bin/verbatim.js", "db", "migrate", "--db", fresh.locationText, "--json"],
              { cwd: root },
            ),
          ),
        );
        const applied = results.map(
          (result) => (JSON.parse(result.stdout) as { applied: string[] }).applied,
        );
        expect(applied.flat().sort()).toEqual([...names].sort());
        expect(await appliedMigrations(fresh.database)).toEqual(names);
      } finally {
        await fresh.cleanup();
      }
    },
    120_000,
  );
});
