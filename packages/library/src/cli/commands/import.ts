import { resolve } from "node:path";
import {
  CONVERSATION_SOURCES,
  importIntoRowsFile,
  importIntoPackages,
  type ConversationSource,
  type PackageImportReport,
  type RowsImportReport,
  type TrajectorySource,
} from "../../interop/index.js";
import { listSourceFiles } from "../../interop/source-files.js";
import { acceptsFile, acceptsTrajectoryFile } from "../../interop/source-names.js";
import { leftOutHeading, leftOutTotals } from "../../interop/summary.js";
import { TRAJECTORY_SOURCES } from "../../interop/trajectories/rows.js";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  usageError,
  type Command,
} from "../command.js";
import type { CliIO } from "../io.js";
import { terminalLines } from "../terminal-text.js";
import { importProgressBar } from "../progress-bar.js";
import { JOBS_TARGET, parseJobs } from "../jobs-option.js";
import { loadServerCommand } from "../server-commands.js";

const SOURCES: readonly string[] = [...CONVERSATION_SOURCES, ...TRAJECTORY_SOURCES];

function isConversationSource(source: string): source is ConversationSource {
  return (CONVERSATION_SOURCES as readonly string[]).includes(source);
}

export const importCommand: Command = {
  words: ["import"],
  usage:
    "claude-code|codex|gemini-cli|cline|opencode <path…> --into <package folder> | sqlite:<file> | postgres://… --subject S | swe-agent|openhands|inspect|codex <path…> --into <rows.jsonl> | sqlite:<file> | postgres://… --subject S [--as chain|job] [--index-now] [--jobs N] [--json]",
  summary:
    "Import Claude Code, Codex or Gemini CLI sessions or Cline (Roo Code, Kilo Code) tasks into format-1 packages or gateway chains (one per conversation; --jobs N threads at once, default the machine's cores up to 4), or agent trajectories into stored rows or background-agent jobs; re-runs change nothing.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      {
        into: { type: "string" },
        subject: { type: "string" },
        as: { type: "string" },
        "index-now": { type: "boolean" },
        jobs: { type: "string" },
        json: { type: "boolean" },
      },
      { min: 2, max: Number.MAX_SAFE_INTEGER },
    );
    const [source = "", ...paths] = positionals;
    if (!SOURCES.includes(source)) {
      throw usageError(
        this,
        `unknown source ${JSON.stringify(source)}: expected ${SOURCES.join(", ")}`,
      );
    }
    const into = values.into;
    if (into === undefined || into === "") throw usageError(this, "--into is required");
    const jobs = values.jobs === undefined ? undefined : parseJobs(this, values.jobs);
    if (/^(sqlite:|postgres(ql)?:\/\/)/.test(into)) {
      // The gateway store is the server package's: its command writes the chains.
      return (await loadServerCommand("import database")).run(args, io);
    }
    if (values.subject !== undefined) {
      throw usageError(
        this,
        "--subject goes with a database target (sqlite:<file> or postgres://…)",
      );
    }
    if (values["index-now"] === true)
      throw usageError(this, "--index-now goes with a database target (sqlite:<file>)");
    // Outside a database, the target says it: a rows file holds jobs, a folder packages.
    const asJob = into.endsWith(".jsonl");
    if (values.as !== undefined && values.as !== (asJob ? "job" : "chain")) {
      throw usageError(
        this,
        `--as ${values.as} does not go with --into ${into}: a rows file (.jsonl) takes jobs, a package folder conversations; --as chain|job chooses for a database target`,
      );
    }
    const json = values.json === true;
    const bar = importProgressBar(io, json);
    const onProgress = bar.onProgress === undefined ? {} : { onProgress: bar.onProgress };
    // Codex also imports as a job trajectory (one turn per Codex turn) into a rows file.
    if (!isConversationSource(source) || (source === "codex" && asJob)) {
      if (jobs !== undefined) throw usageError(this, JOBS_TARGET);
      const trajectorySource = source as TrajectorySource;
      const files = await listSourceFiles(io.cwd, paths, (name) =>
        acceptsTrajectoryFile(trajectorySource, name),
      );
      const report = await importIntoRowsFile({
        source: trajectorySource,
        files,
        into: resolve(io.cwd, into),
        ...onProgress,
      });
      bar.finish();
      if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else writeRowsSummary(report, io);
      return report.totals.refused > 0 || report.unreadableFiles.length > 0
        ? EXIT_CHECK_FAILED
        : EXIT_OK;
    }
    const files = await listSourceFiles(io.cwd, paths, (name, path) =>
      acceptsFile(source, name, path),
    );
    const report = await importIntoPackages({
      source,
      files,
      into: resolve(io.cwd, into),
      ...(jobs === undefined ? {} : { jobs }),
      ...onProgress,
    });
    bar.finish();
    if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    else writeSummary(report, io);
    const failed = report.totals.refused > 0 || report.unreadableFiles.length > 0;
    return failed ? EXIT_CHECK_FAILED : EXIT_OK;
  },
};

function writeLeftOut(
  entries: PackageImportReport["leftOut"],
  lines: string[],
  unit: "line" | "record",
): void {
  const totals = leftOutTotals(entries);
  if (totals.length === 0) return;
  lines.push(leftOutHeading(unit));
  for (const entry of totals) {
    lines.push(
      `  ${entry.what}: ${entry.lines} ${unit}(s) in ${entry.files} file(s): ${entry.reason}`,
    );
  }
}

function writeRowsSummary(report: RowsImportReport, io: CliIO): void {
  const { totals } = report;
  const lines = [
    `${totals.files} file(s), ${(totals.bytes / 1e6).toFixed(1)} MB, ${totals.rows} row(s) into ${report.into}`,
    `turns imported ${totals.imported}, skipped as already imported ${totals.unchanged}, refused ${totals.refused}`,
  ];
  for (const turn of report.turns)
    if (turn.outcome === "refused") lines.push(`  refused ${turn.turn_id}: ${turn.reason ?? ""}`);
  for (const file of report.unreadableFiles)
    lines.push(`  unreadable ${file.file}: ${file.reason}`);
  writeLeftOut(report.leftOut, lines, "record");
  io.stdout(terminalLines(lines));
}

function writeSummary(report: PackageImportReport, io: CliIO): void {
  const { totals } = report;
  const lines = [
    `${totals.files} file(s), ${(totals.bytes / 1e6).toFixed(1)} MB, ${totals.messages} history message(s) into ${report.into}`,
    `imported ${totals.imported}, updated ${totals.updated}, skipped as already imported ${totals.unchanged}, refused ${totals.refused}`,
  ];
  for (const conversation of report.conversations) {
    if (conversation.outcome === "refused")
      lines.push(`  refused ${conversation.name}: ${conversation.reason ?? ""}`);
    if (conversation.imagesOmitted > 0) {
      lines.push(
        `  ${conversation.name}: ${conversation.imagesOmitted} image(s) over the 20 MiB budget kept as omitted images`,
      );
    }
  }
  for (const file of report.unreadableFiles)
    lines.push(`  unreadable ${file.file}: ${file.reason}`);
  writeLeftOut(report.leftOut, lines, "line");
  io.stdout(terminalLines(lines));
}
