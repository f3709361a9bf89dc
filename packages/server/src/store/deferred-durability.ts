import { closeSync, fsyncSync, openSync } from "node:fs";
import { sql } from "kysely";
import type { StoreDatabase } from "./database.js";

/**
 * Durable at the end instead of at every commit, for bulk work that can simply be run again (an
 * import): on SQLite the store commits every write with `synchronous=FULL` (one fsync per
 * transaction). Until `finish`, this connection commits with `synchronous=NORMAL` (WAL mode:
 * commits stay atomic and consistent; the WAL is fsynced at checkpoints only); `finish` fsyncs
 * the WAL file once and sets FULL again, so everything written is durable when it returns. A
 * power loss before `finish` may lose the last commits (never half of one). Other processes'
 * connections keep their own setting. PostgreSQL is left as it is (every commit durable).
 */
export async function deferDurability(
  database: StoreDatabase,
): Promise<{ finish(): Promise<void> }> {
  const location = database.location;
  if (location.dialect !== "sqlite") return { finish: async () => undefined };
  await sql`pragma synchronous = NORMAL`.execute(database.db);
  return {
    async finish() {
      let descriptor: number | undefined;
      try {
        descriptor = openSync(`${location.path}-wal`, "r+");
        fsyncSync(descriptor);
      } catch (error) {
        // No WAL file: everything was checkpointed (and synced) already.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      } finally {
        if (descriptor !== undefined) closeSync(descriptor);
      }
      await sql`pragma synchronous = FULL`.execute(database.db);
    },
  };
}
