import { expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixturesRoot } from "./fixture-files.js";

interface ChainReport {
  conversations: { sourceId: string; conversationId?: string; lastMessageId?: string }[];
}
interface JobReport {
  jobs: { sourceId: string; jobId?: string }[];
}

describeDatabaseTargets("verbatim export --from <database>", (db) => {
  const { run } = db;
  const session = `${fixturesRoot}claude-code/2.1-subagents`;

  async function importInto(into: string, ...rest: string[]) {
    const result = await run(["import", ...rest, "--into", into, "--json"]);
    expect(result.code, result.err).toBe(0);
    return JSON.parse(result.out) as unknown;
  }

  for (const to of ["openai-jsonl", "chatml-jsonl"]) {
    it(`${to}: a conversation of the store gives the bytes its package gives, the same at every run`, async () => {
      const folder = mkdtempSync(join(tmpdir(), "verbatim-export-db-"));
      try {
        const report = (await importInto(
          db.target,
          "claude-code",
          session,
          "--subject",
          `export-${to}`,
        )) as ChainReport;
        await importInto(folder, "claude-code", session);
        for (const entry of report.conversations) {
          const name = entry.sourceId.replace("/", "-");
          const fromPackage = await run([
            "export",
            join(folder, `claude-code-${name}`),
            "--to",
            to,
          ]);
          expect(fromPackage.code, fromPackage.err).toBe(0);
          const exportFrom = (...what: string[]) =>
            run(["export", "--from", db.target, "--subject", `export-${to}`, ...what, "--to", to]);
          const byConversation = await exportFrom("--conversation", entry.conversationId ?? "");
          expect(byConversation.code, byConversation.err).toBe(0);
          expect(byConversation.out).toBe(fromPackage.out);
          expect(byConversation.out.split("\n").length).toBe(2);
          const byMessage = await exportFrom("--message", entry.lastMessageId ?? "");
          expect(byMessage.out).toBe(fromPackage.out);
          expect((await exportFrom("--conversation", entry.conversationId ?? "")).out).toBe(
            byConversation.out,
          );
        }
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }

  it("a job gives one line per turn, the bytes the same rows give from a rows file", async () => {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-export-db-"));
    try {
      const rollout = `${fixturesRoot}codex/0.129`;
      const report = (await importInto(
        db.target,
        "codex",
        rollout,
        "--subject",
        "export-jobs",
        "--as",
        "job",
      )) as JobReport;
      const rows = join(folder, "rows.jsonl");
      await importInto(rows, "codex", rollout);
      const fromRows = await run(["export", rows, "--to", "chatml-jsonl"]);
      const jobs = report.jobs.flatMap((job) => ["--job", job.jobId ?? ""]);
      const fromDatabase = await run([
        "export",
        "--from",
        db.target,
        "--subject",
        "export-jobs",
        ...jobs,
        "--to",
        "chatml-jsonl",
      ]);
      expect(fromDatabase.code, fromDatabase.err).toBe(0);
      // The rows file orders turns by id; the database gives each job's turns in turn order.
      const lines = (text: string) => text.split("\n").filter((line) => line !== "");
      expect(lines(fromDatabase.out).sort()).toEqual(lines(fromRows.out).sort());
      expect(fromDatabase.out.split("\n").length).toBeGreaterThan(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("another subject's conversation or job is not found: skipped with the reason, exit 1", async () => {
    const report = (await importInto(
      db.target,
      "claude-code",
      session,
      "--subject",
      "owner",
    )) as ChainReport;
    const result = await run([
      "export",
      "--from",
      db.target,
      "--subject",
      "stranger",
      "--conversation",
      report.conversations[0]?.conversationId ?? "",
      "--job",
      "job_missing",
      "--to",
      "openai-jsonl",
    ]);
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    expect(result.err).toMatch(/skipped conversation conv_\w+: no conversation conv_\w+/);
    expect(result.err).toMatch(/skipped job job_missing: no job job_missing for this subject/);
  });

  it("usage errors: database flags without --from, --from with packages, nothing named", async () => {
    expect((await run(["export", session, "--subject", "s", "--to", "openai-jsonl"])).err).toMatch(
      /--subject go\(es\) with --from/,
    );
    expect((await run(["export", session, "--from", db.target, "--to", "openai-jsonl"])).code).toBe(
      2,
    );
    const none = await run([
      "export",
      "--from",
      db.target,
      "--subject",
      "s",
      "--to",
      "openai-jsonl",
    ]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/--conversation ID, --message ID or --job ID/);
  });
});
