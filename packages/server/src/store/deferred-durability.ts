import { closeSync, fsyncSync, openSync } from "node:fs";
import { sql } from "kysely";
import type { StoreDatabase } from "../../store/database.js";

/**
 * Durability of an import into SQLite: durable when the command returns, not at every commit.
 * The store commits every write with `synchronous=FULL` (one fsync per transaction), which is
 * most of an import's time. An import is re-runnable and idempotent, so while it runs its
 * connection commits with `synchronous=NORMAL` (WAL mode: commits are atomic and consistent, the
 * WAL is fsynced at checkpoints only); `finish` fsyncs the WAL file once and sets FULL again, so
 * everything imported is durable when the command returns. A power loss during the import may
 * lose its last writes (never half a write); running the import again writes them. Other
 * processes' commits keep their own setting. PostgreSQL is left as it is.
 */
export async function importDurability(
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
