import { afterAll, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { generateCorpus } from "../../bench/interop/generator.js";
import {
  WRITER_THREAD_MIN_BYTES,
  importChainsIntoDatabase,
  useWriterThread,
} from "../../packages/server/src/gateway/import/chains.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { describeDatabaseTargets } from "./database-targets.js";

// Issue 19 (Performance): an import into a SQLite file writes each batch of rows on a thread of
// its own (chain-writer.ts) while the next batch is read, converted and planned; the
// rows it writes are the rows one thread writes. Real files, real SQLite and PostgreSQL.

const folder = mkdtempSync(join(tmpdir(), "verbatim-writer-thread-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
// Small sessions of both shapes; small batches below, so that a run is many transactions.
const corpus = generateCorpus(join(folder, "generated"), 40, 3e6, 11);
/** The session files under a folder, in order. */
const sessionFiles = (under: string): string[] =>
  readdirSync(under, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => join(under, name));
const codexFiles = sessionFiles(corpus.codexFolder);
const claudeFiles = sessionFiles(corpus.claudeFolder);

/** A subject's messages, per conversation (by its source id) in chain order, ids left out. */
async function chains(database: StoreDatabase, subject: string): Promise<string[]> {
  const conversations = await database.db
    .selectFrom("ai_gateway_conversations")
    .select(["id", "metadata"])
    .where("subject_uid", "=", subject)
    .execute();
  const found: string[] = [];
  for (const conversation of conversations) {
    const metadata = (
      typeof conversation.metadata === "string"
        ? JSON.parse(conversation.metadata)
        : conversation.metadata
    ) as Record<string, string>;
    const messages = await database.db
      .selectFrom("ai_gateway_messages")
      .select(["role", "type", "status", "depth", "context_start_depth", "content", "metadata"])
      .where("conversation_id", "=", conversation.id)
      .execute();
    const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
    found.push(
      [
        `${metadata["source_id"]} ${metadata["parent_source_id"] ?? ""}`,
        ...messages
          .map(
            (row) =>
              `${String(row.depth).padStart(6)}/${row.context_start_depth} ${row.role} ${row.type} ${row.status} ${text(row.metadata)} ${text(row.content)}`,
          )
          .sort(),
      ].join("\n"),
    );
  }
  return found.sort();
}

async function count(database: StoreDatabase, table: string, subject: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(
    table,
  )} where subject_uid = ${subject}`.execute(database.db);
  return Number(rows[0]?.n ?? 0);
}

describeDatabaseTargets("import writer thread", (db) => {
  it("issue 19: the writer thread writes the rows one thread writes, and a re-run through it writes nothing", async () => {
    const sqlite = db.database.location.dialect === "sqlite";
    for (const [source, files] of [
      ["codex", codexFiles],
      ["claude-code", claudeFiles],
    ] as const) {
      const one = `one-${source}`;
      const threaded = `thread-${source}`;
      const options = { batchBytes: 128 * 1024 };
      const run = (subject: string, writerThread: boolean) =>
        importChainsIntoDatabase(db.database, "db", source, subject, files, undefined, {
          ...options,
          writerThread,
        });
      const first = await run(one, false);
      const viaThread = await run(threaded, true);
      const outcomes = (report: typeof first) =>
        report.conversations.map((entry) => `${entry.name}:${entry.outcome}:${entry.messages}`);
      expect(outcomes(viaThread)).toEqual(outcomes(first));
      expect(first.conversations.every((entry) => entry.outcome === "imported")).toBe(true);
      const messages = await count(db.database, "ai_gateway_messages", threaded);
      // Many batches: the thread held some while the next were planned.
      expect(messages).toBeGreaterThan(300);
      expect(await chains(db.database, threaded)).toEqual(await chains(db.database, one));
      for (const table of ["ai_gateway_branches", "ai_gateway_idempotency_keys"])
        expect(await count(db.database, table, threaded)).toBe(
          await count(db.database, table, one),
        );
      if (sqlite) {
        // The thread binds the contents as UTF-8 bytes: stored as text all the same.
        const { rows } = await sql<{ kind: string }>`select distinct typeof(content) as kind
          from ai_gateway_messages where subject_uid = ${threaded}`.execute(db.database.db);
        expect(rows).toEqual([{ kind: "text" }]);
      }
      const again = await run(threaded, true);
      expect(again.conversations.every((entry) => entry.outcome === "unchanged")).toBe(true);
      expect(await count(db.database, "ai_gateway_messages", threaded)).toBe(messages);
    }
  });

  it("issue 19: a session imported twice in one run, the second time grown, continues its chain", async () => {
    const original = codexFiles[0] ?? "";
    const lines = readFileSync(original, "utf8").split("\n").filter(Boolean);
    const twice = join(folder, `twice-${db.database.location.dialect}`);
    rmSync(twice, { recursive: true, force: true });
    const copies = join(twice, "copies");
    mkdirSync(copies, { recursive: true });
    // The same rollout twice: first as it was earlier (its first 60% of lines), then whole.
    const earlier = join(copies, "a-rollout-earlier.jsonl");
    const whole = join(copies, "b-rollout-whole.jsonl");
    writeFileSync(earlier, `${lines.slice(0, Math.floor(lines.length * 0.6)).join("\n")}\n`);
    writeFileSync(whole, `${lines.join("\n")}\n`);
    // In one batch (the grown session continues from rows not committed yet), in a batch of
    // its own each, and with the writer thread holding the first when the second is planned.
    for (const [label, options] of [
      ["one batch", {}],
      ["a batch each", { batchBytes: 1 }],
      ["writer thread", { batchBytes: 1, writerThread: true }],
    ] as const) {
      const subject = `twice-${label.replace(/ /g, "-")}`;
      const report = await importChainsIntoDatabase(
        db.database,
        "db",
        "codex",
        subject,
        [earlier, whole],
        undefined,
        options,
      );
      expect(
        report.conversations.map((entry) => entry.outcome),
        label,
      ).toEqual(["imported", "extended"]);
      const [first, second] = report.conversations;
      expect(second?.conversationId, label).toBe(first?.conversationId);
      // The grown session's messages once (the earlier copy's last turn, which a stopped
      // session ends differently, kept beside them as a fork), not a second conversation.
      const stored = await count(db.database, "ai_gateway_messages", subject);
      expect(stored, label).toBeGreaterThanOrEqual(second?.messages ?? 0);
      expect(stored, label).toBeLessThan((second?.messages ?? 0) + (first?.messages ?? 0) / 2);
    }
  });

  it("issue 19: a batch the writer thread cannot write fails the import with its error, and nothing of it is kept", async () => {
    if (db.database.location.dialect !== "sqlite") return;
    const subject = "refused-by-trigger";
    await sql`create trigger import_refused before insert on ai_gateway_messages
      when new.subject_uid = ${sql.lit(subject)}
      begin select raise(abort, 'refused by a test trigger'); end`.execute(db.database.db);
    try {
      await expect(
        importChainsIntoDatabase(db.database, "db", "codex", subject, codexFiles, undefined, {
          batchBytes: 128 * 1024,
          writerThread: true,
        }),
      ).rejects.toThrow(/writer thread failed: refused by a test trigger/);
      expect(await count(db.database, "ai_gateway_messages", subject)).toBe(0);
      expect(await count(db.database, "ai_gateway_conversations", subject)).toBe(0);
    } finally {
      await sql`drop trigger import_refused`.execute(db.database.db);
    }
  });
});

describeDatabaseTargets("import --jobs into a database", (db) => {
  it("issue 19: --jobs 1 and --jobs 2 import the same into a SQLite file; --jobs is refused for PostgreSQL and for jobs", async () => {
    const argv = (subject: string, ...more: string[]) => [
      "import",
      "codex",
      corpus.codexFolder,
      "--into",
      db.target,
      "--subject",
      subject,
      "--json",
      ...more,
    ];
    if (db.database.location.dialect === "postgres") {
      const refused = await db.run(argv("jobs-pg", "--jobs", "2"));
      expect(refused.code).toBe(2);
      expect(refused.err).toContain(
        "--jobs goes with Claude Code or Codex sessions imported into a package folder (--into <folder>) or a SQLite store (--into sqlite:<file>)",
      );
      expect(await count(db.database, "ai_gateway_messages", "jobs-pg")).toBe(0);
      return;
    }
    const reports: string[][] = [];
    for (const jobs of ["1", "2"]) {
      const result = await db.run(argv(`jobs-${jobs}`, "--jobs", jobs));
      expect(result.code, result.err).toBe(0);
      const report = JSON.parse(result.out) as {
        conversations: { name: string; outcome: string; messages: number }[];
      };
      reports.push(
        report.conversations.map((entry) => `${entry.name}:${entry.outcome}:${entry.messages}`),
      );
    }
    expect(reports[1]).toEqual(reports[0]);
    expect(await chains(db.database, "jobs-2")).toEqual(await chains(db.database, "jobs-1"));
    for (const value of ["0", "two"]) {
      const refused = await db.run(argv("jobs-bad", "--jobs", value));
      expect(refused.code).toBe(2);
      expect(refused.err).toContain(
        `--jobs must be a whole number of threads, 1 or more (1 imports in one thread), got ${JSON.stringify(value)}`,
      );
    }
    const trajectories = await db.run([
      "import",
      "swe-agent",
      folder,
      "--into",
      db.target,
      "--subject",
      "jobs-trajectories",
      "--jobs",
      "2",
    ]);
    expect(trajectories.code).toBe(2);
    expect(trajectories.err).toContain("--jobs goes with Claude Code or Codex sessions");
  });

  it("issue 19: the writer thread is used from two threads on and from two batches of files on", () => {
    expect(WRITER_THREAD_MIN_BYTES).toBe(32 * 1024 * 1024);
    expect(useWriterThread(2, WRITER_THREAD_MIN_BYTES)).toBe(true);
    expect(useWriterThread(4, 1e9)).toBe(true);
    expect(useWriterThread(1, 1e9)).toBe(false);
    expect(useWriterThread(2, WRITER_THREAD_MIN_BYTES - 1)).toBe(false);
  });
});
