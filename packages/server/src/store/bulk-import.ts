import { sql } from "kysely";
import type { StoreDatabase } from "./database.js";
import { deferDurability } from "./deferred-durability.js";
import { useImportPageCache } from "./import-page-cache.js";
import { deferSearchIndex } from "./search-deferral.js";

/**
 * What a bulk import (`verbatim import … --into <database>`) sets up before it writes: SQLite
 * commits without an fsync each (deferDurability) and the search indexes left for afterwards
 * (deferSearchIndex). `finish` ends the deferral, which stays pending: its rows are indexed
 * later (by a running server in the background, or `verbatim db index`), and search finds them
 * meanwhile; with `indexNow` (`import --index-now`) they are indexed before it returns. Then it
 * makes everything durable: when it returns, a power loss loses no imported row. Call it on
 * failure too.
 */
export async function beginBulkImport(
  database: StoreDatabase,
  options: { readonly indexNow?: boolean } = {},
): Promise<{ finish(): Promise<void> }> {
  const durability = await deferDurability(database);
  const search = await deferSearchIndex(database);
  return {
    async finish() {
      try {
        await search.finish({ index: options.indexNow === true });
      } finally {
        await durability.finish();
      }
    },
  };
}

/**
 * A second connection that writes for a bulk import begun on another (the import's writer
 * thread, packages/server/src/gateway/import/chain-writer.ts): the import's page cache,
 * and on SQLite commits without an fsync each (the import's own `finish` makes everything
 * durable once this connection's last batch is committed).
 */
export async function joinBulkImport(database: StoreDatabase): Promise<void> {
  await useImportPageCache(database);
  if (database.capabilities.dialect === "sqlite")
    await sql`pragma synchronous = NORMAL`.execute(database.db);
}
