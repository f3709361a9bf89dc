import { leftOutHeading, leftOutTotals, terminalLines } from "verbatim-llm/internal";
import type { CliIO } from "verbatim-llm/cli";
import type { ChainOutcome, DatabaseImportReport } from "../../gateway/import/chains.js";
import type { JobOutcome } from "../../gateway/import/job-importer.js";
import type { JobsImportReport } from "../../gateway/import/jobs.js";

/** What an import of chains did, in lines for a terminal. */
export function writeChainsSummary(report: DatabaseImportReport, io: CliIO): void {
  const count = (outcome: ChainOutcome): number =>
    report.conversations.filter((entry) => entry.outcome === outcome).length;
  const lines = [
    `${report.files.length} file(s) into ${report.database} for ${report.subject}`,
    `imported ${count("imported")}, extended ${count("extended")}, skipped as already imported ${count("unchanged")}, without history ${count("empty")}, refused ${count("refused")}`,
  ];
  for (const entry of report.conversations) {
    if (entry.outcome === "refused") lines.push(`  refused ${entry.name}: ${entry.reason ?? ""}`);
  }
  for (const file of report.unreadableFiles)
    lines.push(`  unreadable ${file.file}: ${file.reason}`);
  const totals = leftOutTotals(report.leftOut);
  if (totals.length > 0) {
    lines.push(leftOutHeading("line"));
    for (const entry of totals)
      lines.push(
        `  ${entry.what}: ${entry.lines} line(s) in ${entry.files} file(s): ${entry.reason}`,
      );
  }
  io.stdout(terminalLines(lines));
}

/** What an import of jobs did, in lines for a terminal. */
export function writeJobsSummary(report: JobsImportReport, io: CliIO): void {
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
