import type { StoreDatabase } from "../../store/database.js";
import { migrateDatabase, type MigrationReport } from "../../store/migrate.js";
import {
  CATCH_UP_AT_ONCE,
  catchUpSearchIndex,
  pendingSearchDeferrals,
  type CatchUpReport,
} from "../../store/search-deferral.js";
import { backfillRecordedHistory, type BackfillReport } from "../recording/backfill.js";
import { convertOldBodies, type ConversionReport } from "../recording/bodies/convert.js";

/** What `upgradeStore` did. */
export interface StoreUpgrade {
  readonly migration: MigrationReport;
  /** Recorded conversations given the history they were recorded before migration 0010. */
  readonly backfilled: BackfillReport;
  /** Recorded calls whose bodies were converted to pieces (recording/bodies/convert.ts). */
  readonly converted: ConversionReport;
}

/**
 * Brings a store to the current schema (`verbatim db migrate`): the migrations, then the rows
 * imports left for the search index (store/search-deferral.ts), then the gateway messages of
 * calls recorded before the store kept them (gateway/recording/backfill.ts), then the bodies of
 * calls recorded before they were stored as pieces (gateway/recording/bodies/convert.ts).
 */
export async function upgradeStore(
  database: StoreDatabase,
  options: { readonly onConversionBatch?: (done: ConversionReport) => void } = {},
): Promise<StoreUpgrade> {
  const migration = await migrateDatabase(database);
  await catchUpSearchIndex(database);
  const backfilled = await backfillRecordedHistory(database);
  const converted = await convertOldBodies(database, {
    ...(options.onConversionBatch === undefined ? {} : { onBatch: options.onConversionBatch }),
  });
  return { migration, backfilled, converted };
}

/** What `indexDeferredRows` did. */
export interface DeferredIndexing {
  readonly report: CatchUpReport;
  /** Imports still running, whose rows are left to them. */
  readonly running: number;
}

/**
 * Indexes now, for the console's search, the rows imports into a SQLite store left for later
 * (`verbatim db index`), which `verbatim serve` otherwise does in the background.
 */
export async function indexDeferredRows(database: StoreDatabase): Promise<DeferredIndexing> {
  await migrateDatabase(database);
  const report = await catchUpSearchIndex(database, CATCH_UP_AT_ONCE);
  return { report, running: await pendingSearchDeferrals(database) };
}
