import {
  importTrajectoryFile,
  type FileAccount,
  type ImportProgress,
  type LeftOutEntry,
  type TrajectorySource,
} from "verbatim-llm/interop";
import { progressCounter, readSourceFile, trajectoryJobs } from "verbatim-llm/internal";
import type { StoreDatabase } from "../../store/database.js";
import { JobImporter, type JobImport } from "./job-importer.js";

export interface JobsImportReport {
  readonly source: TrajectorySource;
  readonly database: string;
  readonly subject: string;
  readonly files: readonly FileAccount[];
  readonly jobs: readonly JobImport[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly unreadableFiles: readonly { readonly file: string; readonly reason: string }[];
}

/**
 * `verbatim import swe-agent|openhands|inspect <path…>` (and `codex --as job`) into a database:
 * each run, issue, sample or rollout becomes a background-agent job of the subject
 * (docs/interop.md). Files are read one at a time; `onProgress` hears after each file (files,
 * bytes and rows).
 */
export async function importJobsIntoDatabase(options: {
  readonly database: StoreDatabase;
  readonly databaseName: string;
  readonly source: TrajectorySource;
  readonly subject: string;
  readonly files: readonly string[];
  readonly onProgress?: ((progress: ImportProgress) => void) | undefined;
}): Promise<JobsImportReport> {
  const fileDone = await progressCounter(options.files, options.onProgress);
  const importer = new JobImporter(options.database, options.subject, options.source);
  const files: FileAccount[] = [];
  const jobs: JobImport[] = [];
  const leftOut: LeftOutEntry[] = [];
  const unreadableFiles: { file: string; reason: string }[] = [];
  for (const file of options.files) {
    const read = readSourceFile(file);
    if (read.bytes === undefined) {
      unreadableFiles.push({ file, reason: read.reason });
      fileDone(0, 0);
      continue;
    }
    const bytes = read.bytes;
    const result = importTrajectoryFile(options.source, file, bytes);
    files.push(result.account);
    leftOut.push(...result.leftOut);
    for (const job of trajectoryJobs(options.source, result.rows, result.jobUsage))
      jobs.push(await importer.importJob(file, job));
    fileDone(bytes.length, result.rows.length);
  }
  return {
    source: options.source,
    database: options.databaseName,
    subject: options.subject,
    files,
    jobs,
    leftOut,
    unreadableFiles,
  };
}
