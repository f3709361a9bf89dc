// Opens a SQLite store with its checkpoint thread, writes, closes, and says so: run by
// sqlite-checkpoint-thread.test.ts as a process of its own, whose exit code tells whether
// close() kept the process alive until the thread had stopped.
import { sql } from "kysely";
import { openDatabase } from "../../packages/server/src/store/database.js";

const database = await openDatabase(
  { dialect: "sqlite", path: process.argv[2] ?? "" },
  { checkpointThread: true },
);
await sql`create table if not exists written (piece blob not null)`.execute(database.db);
await sql`insert into written values (randomblob(4096))`.execute(database.db);
await database.close();
process.stdout.write("closed\n");
