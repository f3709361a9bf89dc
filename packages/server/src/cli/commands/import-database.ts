import { VerbatimError } from "verbatim-llm/core";
import {
  CONVERSATION_SOURCES,
  ROWS_TARGET_SOURCES,
  type ConversationSource,
  type TrajectorySource,
} from "verbatim-llm/interop";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  JOBS_TARGET,
  acceptsFile,
  acceptsTrajectoryFile,
  defaultImportJobs,
  importProgressBar,
  listSourceFiles,
  parseCommandArgs,
  parseJobs,
  usageError,
  type Command,
} from "verbatim-llm/internal";
import { parseDatabaseLocation } from "../../store/location.js";
import { importFailed, importIntoDatabase } from "../../gateway/import/run.js";
import { checkSubjectUid } from "../../gateway/subject-uid.js";
import { writeChainsSummary, writeJobsSummary } from "./import-summary.js";
import { openOptionsFromEnv } from "../../server/connection-budget.js";

/** How a source goes into a database: chains of the gateway store, or background-agent jobs. */
function importMode(command: Command, source: string, as: string | undefined): "chain" | "job" {
  const conversation = (CONVERSATION_SOURCES as readonly string[]).includes(source);
  const trajectory = (ROWS_TARGET_SOURCES as readonly string[]).includes(source);
  if (!conversation && !trajectory) {
    throw usageError(
      command,
      `unknown source ${JSON.stringify(source)}: expected ${[...new Set([...CONVERSATION_SOURCES, ...ROWS_TARGET_SOURCES])].join(", ")}`,
    );
  }
  if (as !== undefined && as !== "chain" && as !== "job")
    throw usageError(command, `--as takes chain or job, not ${JSON.stringify(as)}`);
  const mode = as ?? (conversation ? "chain" : "job");
  if (mode === "chain" && !conversation)
    throw usageError(command, `${source} imports as jobs only (--as job)`);
  if (mode === "job" && !trajectory)
    throw usageError(command, `${source} imports as chains only (--as chain)`);
  return mode;
}

/**
 * `verbatim import claude-code|codex <path…> --into sqlite:<file> | postgres://… --subject S`:
 * each conversation becomes one chain of the subject in the gateway store; trajectory sources
 * (and `codex --as job`) become background-agent jobs (docs/interop.md). The database is
 * migrated first, as `verbatim serve` does.
 */
export const importDatabase: Command = {
  words: ["import"],
  usage:
    "claude-code|codex|opencode|swe-agent|openhands|inspect <path…> --into sqlite:<file> | postgres://… --subject <subject_uid> [--as chain|job] [--index-now] [--jobs N] [--json]",
  summary:
    "Import Claude Code or Codex sessions into the gateway store (one chain per conversation), or agent trajectories as background-agent jobs.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      {
        into: { type: "string" },
        subject: { type: "string" },
        as: { type: "string" },
        json: { type: "boolean" },
        "index-now": { type: "boolean" },
        jobs: { type: "string" },
      },
      { min: 2, max: Number.MAX_SAFE_INTEGER },
    );
    const [source = "", ...paths] = positionals;
    const mode = importMode(this, source, values.as);
    const into = values.into ?? "";
    if (values.subject === undefined)
      throw usageError(this, "--subject is required with a database target");
    const subject = checkSubjectUid(values.subject);
    const text = into.startsWith("sqlite:") ? into.slice("sqlite:".length) : into;
    let location;
    try {
      location = parseDatabaseLocation(text);
    } catch (error) {
      throw usageError(this, error instanceof VerbatimError ? error.describe() : String(error));
    }
    const jobs = values.jobs === undefined ? defaultImportJobs() : parseJobs(this, values.jobs);
    if (values.jobs !== undefined && (mode === "job" || location.dialect !== "sqlite"))
      throw usageError(this, JOBS_TARGET);
    const files = await listSourceFiles(io.cwd, paths, (name, path) =>
      mode === "job"
        ? acceptsTrajectoryFile(source as TrajectorySource, name)
        : acceptsFile(source as ConversationSource, name, path),
    );
    const json = values.json === true;
    const bar = importProgressBar(io, json);
    const common = {
      location,
      open: openOptionsFromEnv(io.env),
      subject,
      files,
      jobs,
      indexNow: values["index-now"] === true,
      onProgress: bar.onProgress,
    };
    const result = await importIntoDatabase(
      mode === "job"
        ? { ...common, mode, source: source as TrajectorySource }
        : { ...common, mode, source: source as ConversationSource },
    );
    bar.finish();
    if (json) io.stdout(`${JSON.stringify(result.report, null, 2)}\n`);
    else if (result.mode === "job") writeJobsSummary(result.report, io);
    else writeChainsSummary(result.report, io);
    return importFailed(result) ? EXIT_CHECK_FAILED : EXIT_OK;
  },
};
