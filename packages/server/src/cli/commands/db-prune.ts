import { VerbatimError } from "verbatim-llm/core";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "verbatim-llm/internal";
import type { CliIO } from "verbatim-llm/cli";
import {
  deleteSubject,
  pruneStore,
  retentionLine,
  type RetentionReport,
} from "../../gateway/maintenance/retention.js";
import { openDatabase } from "../../store/database.js";
import { migrateDatabase } from "../../store/migrate.js";
import { describeLocation, type DatabaseLocation } from "../../store/location.js";
import { existingStore } from "./database-option.js";
import { openOptionsFromEnv } from "../../server/connection-budget.js";

/** An ISO 8601 time with a date, as `--before` takes it, in the store's form (UTC, ms). */
function cutoffOf(command: Command, text: string | undefined): string {
  if (text === undefined) throw usageError(command, "--before is required (an ISO 8601 time)");
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new VerbatimError(
      "invalid_argument",
      `--before must be an ISO 8601 time, not "${text}"`,
      {
        where: "--before",
        hint: "Give a date or a date and time, for example 2026-01-31 or 2026-01-31T12:00:00Z",
      },
    );
  }
  return new Date(time).toISOString();
}

async function withStore(
  location: DatabaseLocation,
  io: CliIO,
  json: boolean,
  work: (
    database: Awaited<ReturnType<typeof openDatabase>>,
    progress: (done: RetentionReport) => void,
  ) => Promise<RetentionReport>,
): Promise<number> {
  const database = await openDatabase(location, { poolSize: 1, ...openOptionsFromEnv(io.env) });
  try {
    await migrateDatabase(database);
    // On a terminal, how far a long run is, on one line.
    const progress = (done: RetentionReport): void => {
      if (io.stderrIsTTY === true) io.stderr(`\r${retentionLine(done)}…`);
    };
    const report = await work(database, progress);
    if (io.stderrIsTTY === true) io.stderr("\n");
    const where = describeLocation(location);
    io.stdout(
      json
        ? `${JSON.stringify({ database: where, ...report })}\n`
        : `${where}: ${retentionLine(report)}\n`,
    );
    return EXIT_OK;
  } finally {
    await database.close();
  }
}

/**
 * `verbatim db prune --before T [--subject S]`: deletes what ended before T and frees the
 * recorded bytes and images nothing refers to any more (gateway/maintenance/retention.ts).
 */
export const dbPrune: Command = {
  words: ["db", "prune"],
  usage: "--before <ISO time> [--subject S] --db <sqlite path | postgres url> [--dry-run] [--json]",
  summary:
    "Delete conversations (with their messages, recorded calls and jobs) whose last activity is before a time, and free the recorded bytes and images nothing refers to any more.",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      {
        before: { type: "string" },
        subject: { type: "string" },
        db: { type: "string" },
        "dry-run": { type: "boolean" },
        json: { type: "boolean" },
      },
      { min: 0, max: 0 },
    );
    const before = cutoffOf(this, values.before);
    if (values.subject === "") throw usageError(this, "--subject must not be empty");
    const location = existingStore(this, values.db, io.cwd);
    return withStore(location, io, values.json === true, (database, onProgress) =>
      pruneStore(database, {
        before,
        dryRun: values["dry-run"] === true,
        onProgress,
        ...(values.subject === undefined ? {} : { subjectUid: values.subject }),
      }),
    );
  },
};

/** `verbatim db delete-subject S`: everything the subject owns (gateway/maintenance/retention.ts). */
export const dbDeleteSubject: Command = {
  words: ["db", "delete-subject"],
  usage: "<subject> --db <sqlite path | postgres url> [--dry-run] [--json]",
  summary:
    "Delete everything a subject owns: conversations, messages, recorded calls and their bytes, images, jobs and API keys.",
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      this,
      args,
      { db: { type: "string" }, "dry-run": { type: "boolean" }, json: { type: "boolean" } },
      { min: 1, max: 1 },
    );
    const subject = positionals[0] as string;
    if (subject === "") throw usageError(this, "the subject must not be empty");
    const location = existingStore(this, values.db, io.cwd);
    return withStore(location, io, values.json === true, (database, onProgress) =>
      deleteSubject(database, subject, { dryRun: values["dry-run"] === true, onProgress }),
    );
  },
};
