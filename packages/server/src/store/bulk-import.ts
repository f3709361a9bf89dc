import type { StoreDatabase } from "./database.js";
import { deferDurability } from "./deferred-durability.js";
import { deferSearchIndex } from "./search-deferral.js";

/**
 * What a bulk import (`verbatim import … --into <database>`) sets up before it writes: SQLite
 * commits without an fsync each (deferDurability) and the search indexes filled at the end
 * (deferSearchIndex). `finish` indexes the imported rows, then makes everything durable: when it
 * returns, search finds every imported row and a power loss loses none. Call it on failure too.
 */
export async function beginBulkImport(
  database: StoreDatabase,
): Promise<{ finish(): Promise<void> }> {
  const durability = await deferDurability(database);
  const search = await deferSearchIndex(database);
  return {
    async finish() {
      try {
        await search.finish();
      } finally {
        await durability.finish();
      }
    },
  };
}
