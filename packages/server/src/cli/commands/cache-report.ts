import { resolve } from "node:path";
import { VerbatimError } from "verbatim-llm/core";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "verbatim-llm/internal";
import { cacheReports } from "../../gateway/recording/cache-report.js";
import { openDatabase } from "../../store/database.js";
import { appliedMigrations } from "../../store/migrate.js";
import { type DatabaseLocation } from "../../store/location.js";
import { databaseOption } from "./database-option.js";
import { openOptionsFromEnv } from "../../server/connection-budget.js";

function percent(ratio: number | null): string {
  return ratio === null ? "n/a" : `${(ratio * 100).toFixed(1)}%`;
}

function dollars(value: number | null): string {
  return value === null ? "n/a (model not priced)" : `$${value.toFixed(4)}`;
}

/** `verbatim cache-report`: per recorded conversation, calls, hit ratio, losses and breaks. */
export const cacheReport: Command = {
  words: ["cache-report"],
  usage: "--db <sqlite path | postgres url> [--subject S] [--since T] [--json]",
  summary:
    "Per recorded conversation (/v1/messages, /v1/chat/completions): calls, cache hit ratio, tokens and dollars lost to misses, and where each miss broke the prefix.",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      {
        db: { type: "string" },
        subject: { type: "string" },
        since: { type: "string" },
        json: { type: "boolean" },
      },
      { min: 0, max: 0 },
    );
    let location = databaseOption(this, values.db);
    if (location.dialect === "sqlite" && location.path !== ":memory:") {
      location = { dialect: "sqlite", path: resolve(io.cwd, location.path) };
    }
    let since: string | undefined;
    if (values.since !== undefined) {
      const time = Date.parse(values.since);
      if (Number.isNaN(time)) {
        throw usageError(
          this,
          `--since "${values.since}" is not a time; give an ISO 8601 time such as 2026-12-01T00:00:00Z`,
        );
      }
      since = new Date(time).toISOString();
    }
    const database = await openDatabase(location, { poolSize: 1, ...openOptionsFromEnv(io.env) });
    try {
      const applied = await appliedMigrations(database);
      if (!applied.includes("0009-recorded-calls")) {
        throw new VerbatimError("invalid_argument", "the database has no recorded calls table", {
          where: "--db",
          hint: "Run verbatim db migrate --db <same database> (verbatim serve does it at start)",
        });
      }
      const reports = await cacheReports(database, {
        ...(values.subject === undefined ? {} : { subjectUid: values.subject }),
        ...(since === undefined ? {} : { since }),
      });
      if (values.json === true) {
        io.stdout(JSON.stringify({ conversations: reports }) + "\n");
        return EXIT_OK;
      }
      if (reports.length === 0) {
        io.stdout("no recorded calls\n");
        return EXIT_OK;
      }
      for (const { summary, calls } of reports) {
        io.stdout(
          `${summary.conversation_id} (subject ${summary.subject_uid}): ${summary.calls} call(s), cache hit ${percent(summary.hit_ratio)}, lost ${summary.lost_tokens} tokens, ${dollars(summary.lost_dollars)}\n`,
        );
        for (const call of calls) {
          if (call.difference === null) continue;
          io.stdout(
            `  ${call.call_id} broke at ${call.difference.path}: ${call.difference.reason}\n    before: ${call.difference.before}\n    after:  ${call.difference.after}\n`,
          );
        }
      }
      return EXIT_OK;
    } finally {
      await database.close();
    }
  },
};
