import { createApiKey, revokeApiKey } from "../../gateway/keys/api-keys.js";
import { DEFAULT_DATABASE, openStore } from "../../server/serve.js";
import { migrateDatabase } from "../../store/migrate.js";
import type { StoreDatabase } from "../../store/database.js";
import type { CliIO } from "verbatim-llm/cli";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "verbatim-llm/internal";

async function withStore<T>(
  text: string,
  io: CliIO,
  work: (database: StoreDatabase) => Promise<T>,
): Promise<T> {
  const database = await openStore(text, io.cwd, io.env);
  try {
    await migrateDatabase(database);
    return await work(database);
  } finally {
    await database.close();
  }
}

export const keysCreate: Command = {
  words: ["keys", "create"],
  usage: "--subject <subject_uid> [--db <sqlite path | postgres url>] [--json]",
  summary:
    "Create an API key for a subject; prints the key alone on the last line (it works at once, also for a running server).",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      { db: { type: "string" }, subject: { type: "string" }, json: { type: "boolean" } },
      { min: 0, max: 0 },
    );
    if (values.subject === undefined) throw usageError(this, "--subject is required");
    const subject = values.subject;
    const created = await withStore(values.db ?? DEFAULT_DATABASE, io, (database) =>
      createApiKey(database, subject),
    );
    if (values.json === true) {
      io.stdout(
        JSON.stringify({
          created_at: created.createdAt,
          key: created.key,
          subject_uid: created.subjectUid,
        }) + "\n",
      );
    } else {
      io.stdout(
        `API key for subject ${created.subjectUid} (shown once; only its hash is stored):\n${created.key}\n`,
      );
    }
    return EXIT_OK;
  },
};

export const keysRevoke: Command = {
  words: ["keys", "revoke"],
  usage: "<key> [--db <sqlite path | postgres url>] [--json]",
  summary: "Revoke an API key; requests with it get 401 at once.",
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      this,
      args,
      { db: { type: "string" }, json: { type: "boolean" } },
      { min: 1, max: 1 },
    );
    const key = positionals[0] ?? "";
    const revoked = await withStore(values.db ?? DEFAULT_DATABASE, io, (database) =>
      revokeApiKey(database, key),
    );
    if (values.json === true) {
      io.stdout(
        JSON.stringify({
          revoked_at: revoked.revokedAt,
          subject_uid: revoked.subjectUid,
          already_revoked: revoked.alreadyRevoked,
        }) + "\n",
      );
    } else if (revoked.alreadyRevoked) {
      io.stdout(
        `the API key of subject ${revoked.subjectUid} was already revoked at ${revoked.revokedAt}; nothing changed\n`,
      );
    } else {
      io.stdout(`revoked the API key of subject ${revoked.subjectUid}\n`);
    }
    return EXIT_OK;
  },
};
