import type { ConversationSource, ImportProgress, TrajectorySource } from "verbatim-llm/interop";
import { openDatabase, type OpenDatabaseOptions } from "../../store/database.js";
import { describeLocation, type DatabaseLocation } from "../../store/location.js";
import { migrateDatabase } from "../../store/migrate.js";
import { beginBulkImport } from "../../store/bulk-import.js";
import { useImportPageCache } from "../../store/import-page-cache.js";
import {
  filesBytes,
  importChainsIntoDatabase,
  useWriterThread,
  type DatabaseImportReport,
} from "./chains.js";
import { importJobsIntoDatabase, type JobsImportReport } from "./jobs.js";

/** What a database import reads, and how it goes in. */
export type DatabaseImportSource =
  /** Each conversation becomes one chain of the gateway store. */
  | { readonly mode: "chain"; readonly source: ConversationSource }
  /** Each run, issue, sample or rollout becomes a background-agent job. */
  | { readonly mode: "job"; readonly source: TrajectorySource };

export type DatabaseImportOptions = DatabaseImportSource & {
  readonly location: DatabaseLocation;
  /** How to open PostgreSQL (behind a pooler: VERBATIM_PG_POOLER). */
  readonly open?: OpenDatabaseOptions;
  readonly subject: string;
  readonly files: readonly string[];
  /** Threads a chain import into a SQLite file may use (a writer thread from two). */
  readonly jobs: number;
  /** Index the rows for search now instead of leaving them to the server (SQLite). */
  readonly indexNow: boolean;
  readonly onProgress?: ((progress: ImportProgress) => void) | undefined;
};

export type DatabaseImportResult =
  | { readonly mode: "chain"; readonly report: DatabaseImportReport }
  | { readonly mode: "job"; readonly report: JobsImportReport };

/**
 * Imports `files` into the database at `location` for `subject`: the database is migrated first
 * (as `verbatim serve` does), its page cache sized for the import, and the search index's work
 * deferred for the run (store/bulk-import.ts) unless `indexNow`.
 */
export async function importIntoDatabase(
  options: DatabaseImportOptions,
): Promise<DatabaseImportResult> {
  const database = await openDatabase(options.location, { ...options.open, poolSize: 1 });
  try {
    await migrateDatabase(database);
    await useImportPageCache(database);
    const bulk = await beginBulkImport(database, { indexNow: options.indexNow });
    try {
      const databaseName = describeLocation(options.location);
      if (options.mode === "job") {
        const report = await importJobsIntoDatabase({
          database,
          databaseName,
          source: options.source,
          subject: options.subject,
          files: options.files,
          onProgress: options.onProgress,
        });
        return { mode: "job", report };
      }
      const report = await importChainsIntoDatabase(
        database,
        databaseName,
        options.source,
        options.subject,
        options.files,
        options.onProgress,
        // The files' sizes are read only where a writer thread could be used.
        {
          writerThread:
            options.location.dialect === "sqlite" &&
            options.jobs > 1 &&
            useWriterThread(options.jobs, await filesBytes(options.files)),
        },
      );
      return { mode: "chain", report };
    } finally {
      await bulk.finish();
    }
  } finally {
    await database.close();
  }
}

/** Whether an import's report names a file that could not be read or a refused entry. */
export function importFailed(result: DatabaseImportResult): boolean {
  if (result.report.unreadableFiles.length > 0) return true;
  return result.mode === "job"
    ? result.report.jobs.some((job) => job.outcome === "refused")
    : result.report.conversations.some((entry) => entry.outcome === "refused");
}
