/**
 * Issue 31, item 5: a SQLite commit that crosses 1,000 WAL pages ran the checkpoint on the
 * server's thread, holding every other request for tens of milliseconds. With
 * `checkpointThread` (what `verbatim serve` opens the store with) the server's connection never
 * checkpoints and a worker thread does it: the WAL stays bounded while the server writes, the
 * data is all there after a reopen, and close stops the thread.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, expect, it } from "vitest";
import BetterSqlite3 from "better-sqlite3";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { until } from "../support/until.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const autocheckpoint = async (database: Awaited<ReturnType<typeof openDatabase>>) =>
  (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db))
    .rows[0]?.wal_autocheckpoint;

it("issue 31: checkpoints run off the server's thread and keep the WAL bounded", async () => {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-checkpoints-"));
  folders.push(folder);
  const path = join(folder, "store.sqlite");
  const plain = await openDatabase({ dialect: "sqlite", path });
  expect(await autocheckpoint(plain)).toBe(1000);
  await sql`create table written (piece blob not null)`.execute(plain.db);
  await plain.close();

  const database = await openDatabase({ dialect: "sqlite", path }, { checkpointThread: true });
  // The server's connection never checkpoints by itself.
  expect(await autocheckpoint(database)).toBe(0);
  let largestWal = 0;
  for (let piece = 0; piece < 48; piece++) {
    await sql`insert into written values (randomblob(1048576))`.execute(database.db);
    largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // 48 MiB written: without a checkpoint the WAL would hold all of it.
  expect(largestWal).toBeLessThan(24 * 1024 * 1024);
  await database.close();

  const reopened = await openDatabase({ dialect: "sqlite", path });
  const { rows } = await sql<{
    count: number;
  }>`select count(*) as count from written`.execute(reopened.db);
  expect(rows[0]?.count).toBe(48);
  await reopened.close();
}, 60_000);

it("issue 31: when the thread falls behind, the writer checkpoints at its commits until it has caught up", async () => {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-checkpoints-"));
  folders.push(folder);
  const path = join(folder, "store.sqlite");
  const database = await openDatabase({ dialect: "sqlite", path }, { checkpointThread: true });
  await sql`create table written (piece blob not null)`.execute(database.db);
  // A reader holding an old snapshot keeps every checkpoint from copying the frames after it,
  // so the WAL cannot start again, as with a writer that commits while every checkpoint runs.
  const reader = new BetterSqlite3(path);
  reader.exec("begin");
  reader.prepare("select count(*) from written").get();
  for (let piece = 0; piece < 12; piece++)
    await sql`insert into written values (randomblob(1048576))`.execute(database.db);
  await until(async () => (await autocheckpoint(database)) === 1000, 10_000);
  // Once the reader is gone the writer's next commits copy the frames and start the WAL again;
  // then the thread finds it small and the writer stops checkpointing.
  reader.exec("commit");
  reader.close();
  for (let piece = 0; piece < 2; piece++)
    await sql`insert into written values (randomblob(1024))`.execute(database.db);
  await until(async () => (await autocheckpoint(database)) === 0, 10_000);
  await database.close();
}, 60_000);

it("issue 31: an in-memory database has no checkpoint thread and keeps its settings", async () => {
  const database = await openDatabase(
    { dialect: "sqlite", path: ":memory:" },
    { checkpointThread: true },
  );
  expect(await autocheckpoint(database)).toBe(1000);
  await database.close();
});

it("issue 31: close waits for the checkpoint thread to stop, and the process then ends by itself", () => {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-checkpoints-"));
  folders.push(folder);
  const output = execFileSync(
    process.execPath,
    ["bin/run-ts.js", "test/server/checkpoint-close-child.ts", join(folder, "store.sqlite")],
    { encoding: "utf8", timeout: 30_000 },
  );
  expect(output).toBe("closed\n");
}, 60_000);
