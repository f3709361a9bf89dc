import {
  importTrajectoryFile,
  leftOutHeading,
  leftOutTotals,
  progressCounter,
  readSourceFile,
  trajectoryJobs,
  type FileAccount,
  type LeftOutEntry,
  type TrajectorySource,
} from "verbatim-llm/interop";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  terminalLines,
  type CliIO,
  type ImportProgressBar,
} from "verbatim-llm/cli";
import type { StoreDatabase } from "../../store/database.js";
import { JobImporter, type JobImport, type JobOutcome } from "./import-jobs.js";

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
 * (docs/interop.md). Files are read one at a time; the progress bar counts files, bytes and
 * rows.
 */
export async function importJobsIntoDatabase(options: {
  readonly database: StoreDatabase;
  readonly databaseName: string;
  readonly source: TrajectorySource;
  readonly subject: string;
  readonly files: readonly string[];
  readonly json: boolean;
  readonly io: CliIO;
  readonly bar: ImportProgressBar;
}): Promise<number> {
  const fileDone = await progressCounter(options.files, options.bar.onProgress);
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
  options.bar.finish();
  const report: JobsImportReport = {
    source: options.source,
    database: options.databaseName,
    subject: options.subject,
    files,
    jobs,
    leftOut,
    unreadableFiles,
  };
  if (options.json) options.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else writeJobsSummary(report, options.io);
  const failed = unreadableFiles.length > 0 || jobs.some((job) => job.outcome === "refused");
  return failed ? EXIT_CHECK_FAILED : EXIT_OK;
}

function writeJobsSummary(report: JobsImportReport, io: CliIO): void {
  const count = (outcome: JobOutcome): number =>
    report.jobs.filter((job) => job.outcome === outcome).length;
  const lines = [
    `${report.files.length} file(s) into ${report.database} for ${report.subject}: ${report.jobs.length} job(s)`,
    `imported ${count("imported")}, skipped as already imported ${count("unchanged")}, refused ${count("refused")}`,
  ];
  for (const job of report.jobs)
    if (job.outcome === "refused") lines.push(`  refused ${job.sourceId}: ${job.reason ?? ""}`);
  for (const file of report.unreadableFiles)
    lines.push(`  unreadable ${file.file}: ${file.reason}`);
  const totals = leftOutTotals(report.leftOut);
  if (totals.length > 0) {
    lines.push(leftOutHeading("record"));
    for (const entry of totals)
      lines.push(
        `  ${entry.what}: ${entry.lines} record(s) in ${entry.files} file(s): ${entry.reason}`,
      );
  }
  io.stdout(terminalLines(lines));
}
