import type { StoreDatabase } from "../../store/database.js";
import { startSearchIndexCatchUp } from "../../store/search-deferral.js";

/** The search index's catch-up while a server runs; `stop` ends it (before the store closes). */
export interface SearchIndexUpkeep {
  stop(): Promise<void>;
}

/**
 * While the server answers: the rows imports left for the console's search index, indexed in
 * small steps (search finds them meanwhile), and those of imports made while it runs
 * (store/search-deferral.ts, at the server's pace). SQLite only; nothing on PostgreSQL.
 */
export function keepSearchIndexCaughtUp(database: StoreDatabase): SearchIndexUpkeep {
  return startSearchIndexCatchUp(database);
}
