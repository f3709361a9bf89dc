import { sql } from "kysely";
import type { StoreDatabase } from "./database.js";

/**
 * KiB of SQLite page cache of a bulk import's connection (`verbatim import … --into <database>`).
 * The import's own connection, closed when it ends, reads little (key look-ups and anchors): a
 * smaller page cache than the store's 64 MiB keeps its memory from growing with the folder
 * (measured no slower; docs/interop.md "Performance").
 */
export const IMPORT_PAGE_CACHE_KIB = 16 * 1024;

/** Gives a bulk import's SQLite connection its smaller page cache (nothing on PostgreSQL). */
export async function useImportPageCache(database: StoreDatabase): Promise<void> {
  if (database.capabilities.dialect !== "sqlite") return;
  await sql.raw(`pragma cache_size = -${IMPORT_PAGE_CACHE_KIB}`).execute(database.db);
}
