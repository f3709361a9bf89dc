import { expect, it } from "vitest";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  importTrajectoryFile,
  type TrajectorySource,
} from "../../packages/library/src/interop/index.js";
import { trajectoryJobs } from "../../packages/library/src/internal/index.js";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { testServer } from "../support/server.js";
import { fixtureFiles, fixturesRoot } from "./fixture-files.js";

interface JobsReport {
  jobs: {
    sourceId: string;
    file: string;
    outcome: string;
    reason?: string;
    jobId?: string;
    conversationId?: string;
    turns: number;
    rows: number;
  }[];
  files: { file: string; lines: number; imported: number; leftOut: number }[];
}

const sources: { source: TrajectorySource; folder: string; suffix: string; extra?: string[] }[] = [
  { source: "swe-agent", folder: "swe-agent", suffix: ".traj" },
  { source: "openhands", folder: "openhands", suffix: ".json" },
  { source: "inspect", folder: "inspect", suffix: ".json" },
  { source: "codex", folder: "codex", suffix: ".jsonl", extra: ["--as", "job"] },
];

describeDatabaseTargets(
  "verbatim import <trajectory source> --into <database> --subject S: background-agent jobs",
  (db) => {
    const run = db.run;
    async function importJson(argv: string[]): Promise<{ code: number; report: JobsReport }> {
      const result = await run([...argv, "--json"]);
      expect(result.err).toBe("");
      return { code: result.code, report: JSON.parse(result.out) as JobsReport };
    }

    for (const { source, folder, suffix, extra } of sources) {
      it(`${source}: every job of the corpus is stored with the rows the importer gives, turn by turn; a re-run writes nothing`, async () => {
        const subject = `${source}-subject`;
        const argv = [
          "import",
          source,
          `${fixturesRoot}${folder}`,
          "--into",
          db.target,
          "--subject",
          subject,
          ...(extra ?? []),
        ];
        const first = await importJson(argv);
        expect(first.code, JSON.stringify(first.report.jobs)).toBe(0);
        const expected = fixtureFiles(folder, suffix)
          .concat(source === "openhands" ? fixtureFiles(folder, "output.jsonl") : [])
          .flatMap((file) =>
            trajectoryJobs(source, importTrajectoryFile(source, file, readFileSync(file)).rows),
          );
        expect(expected.length).toBeGreaterThan(0);
        expect(first.report.jobs.map((job) => job.outcome)).toEqual(expected.map(() => "imported"));
        const jobs = new BackgroundAgentJobs(db.database);
        for (const job of expected) {
          const entry = first.report.jobs.find((candidate) => candidate.sourceId === job.sourceId);
          const stored = await jobs.readTrajectory(subject, entry?.jobId ?? "");
          expect(stored.job).toMatchObject({
            status: "succeeded",
            metadata: { source, source_id: job.sourceId },
          });
          expect(stored.turns.map((turn) => turn.status)).toEqual(job.turns.map(() => "completed"));
          // Each source turn is one stored turn, in order, holding the same items and keys.
          stored.turns.forEach((turn, index) => {
            const rows = stored.rows.filter((row) => row.turn_id === turn.id);
            const source = job.turns[index]?.rows ?? [];
            expect(rows.map((row) => [row.position, row.item_key, row.item])).toEqual(
              source.map((row) => [row.position, row.item_key, row.item]),
            );
          });
          // The owning conversation names the source.
          const conversation = await new GatewayMessageStore(db.database).getConversation(
            subject,
            stored.job.conversationId,
          );
          expect(conversation.metadata).toMatchObject({ source, source_id: job.sourceId });
        }
        const again = await importJson(argv);
        expect(again.code).toBe(0);
        expect(again.report.jobs.map((job) => [job.outcome, job.jobId])).toEqual(
          first.report.jobs.map((job) => ["unchanged", job.jobId]),
        );
      });
    }

    it("a job whose source changed is refused, and the stored job is left as it was", async () => {
      const folder = mkdtempSync(join(tmpdir(), "verbatim-jobs-"));
      try {
        const file = join(folder, "run.traj");
        copyFileSync(`${fixturesRoot}swe-agent/function_calling_simple.traj`, file);
        const argv = ["import", "swe-agent", file, "--into", db.target, "--subject", "changed"];
        const first = await importJson(argv);
        expect(first.report.jobs[0]?.outcome).toBe("imported");
        const trajectory = JSON.parse(readFileSync(file, "utf8")) as {
          history: { content: unknown }[];
        };
        const firstMessage = trajectory.history[0];
        if (firstMessage !== undefined) firstMessage.content = "another system prompt";
        writeFileSync(file, JSON.stringify(trajectory));
        const second = await importJson(argv);
        expect(second.code).toBe(1);
        expect(second.report.jobs[0]).toMatchObject({
          outcome: "refused",
          jobId: first.report.jobs[0]?.jobId,
        });
        expect(second.report.jobs[0]?.reason).toMatch(/never rewritten/);
        const stored = await new BackgroundAgentJobs(db.database).readTrajectory(
          "changed",
          first.report.jobs[0]?.jobId ?? "",
        );
        expect(JSON.stringify(stored.rows)).not.toContain("another system prompt");
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });

    it("a job the store refuses is cancelled and reported; an import cut short is cancelled and imported again on the next run", async () => {
      const folder = mkdtempSync(join(tmpdir(), "verbatim-jobs-"));
      try {
        const file = join(folder, "run.traj");
        const original = readFileSync(`${fixturesRoot}swe-agent/function_calling_simple.traj`);
        const trajectory = JSON.parse(original.toString("utf8")) as {
          history: { content: unknown }[];
        };
        const firstMessage = trajectory.history[0];
        // One item over the store's 4 MiB per item.
        if (firstMessage !== undefined) firstMessage.content = "x".repeat(5 * 1024 * 1024);
        writeFileSync(file, JSON.stringify(trajectory));
        const argv = ["import", "swe-agent", file, "--into", db.target, "--subject", "cut-short"];
        const refused = await importJson(argv);
        expect(refused.code).toBe(1);
        expect(refused.report.jobs[0]).toMatchObject({ outcome: "refused" });
        expect(refused.report.jobs[0]?.reason).toMatch(/over 4194304 bytes/);
        const jobs = new BackgroundAgentJobs(db.database);
        expect((await jobs.getJob("cut-short", refused.report.jobs[0]?.jobId ?? "")).status).toBe(
          "cancelled",
        );
        // What an import stopped after starting its job leaves behind: a running job.
        const conversationId = refused.report.jobs[0]?.conversationId ?? "";
        const left = await jobs.createJob("cut-short", { conversationId, retryBudget: 0 });
        await jobs.startAttempt("cut-short", left.id);
        writeFileSync(file, original);
        const again = await importJson(argv);
        expect(again.report.jobs[0]).toMatchObject({ outcome: "imported", conversationId });
        expect((await jobs.getJob("cut-short", left.id)).status).toBe("cancelled");
        const jobId = again.report.jobs[0]?.jobId ?? "";
        expect((await jobs.getJob("cut-short", jobId)).status).toBe("succeeded");
        expect((await importJson(argv)).report.jobs[0]).toMatchObject({
          outcome: "unchanged",
          jobId,
        });
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });

    it("the console's job view opens an imported job, in the stored and ChatML views", async () => {
      const file = `${fixturesRoot}codex/0.125`;
      const argv = [
        "import",
        "codex",
        file,
        "--into",
        db.target,
        "--subject",
        "console",
        "--as",
        "job",
      ];
      const { report } = await importJson(argv);
      const jobId = report.jobs[0]?.jobId ?? "";
      const server = await testServer(db.database);
      try {
        const list = await server.app.inject({
          method: "GET",
          url: "/background-agent-jobs?subject_uid=console",
          headers: server.operator,
        });
        expect(list.statusCode).toBe(200);
        expect((list.json() as { data: { id: string }[] }).data.map((job) => job.id)).toEqual([
          jobId,
        ]);
        for (const view of ["stored", "chatml"]) {
          const detail = await server.app.inject({
            method: "GET",
            url: `/background-agent-jobs/${jobId}?view=${view}`,
            headers: server.operator,
          });
          expect(detail.statusCode, detail.body).toBe(200);
          const body = detail.json() as {
            job: { status: string };
            turns: { trajectory: { items?: unknown[]; messages?: { role: string }[] } }[];
          };
          expect(body.job.status).toBe("succeeded");
          expect(body.turns.length).toBe(report.jobs[0]?.turns);
          if (view === "stored") {
            expect(
              body.turns.reduce((sum, turn) => sum + (turn.trajectory.items?.length ?? 0), 0),
            ).toBe(report.jobs[0]?.rows);
          } else {
            const roles = body.turns.flatMap((turn) =>
              (turn.trajectory.messages ?? []).map((message) => message.role),
            );
            expect(roles).toContain("user");
            expect(roles).toContain("assistant");
          }
        }
      } finally {
        await server.app.close();
      }
    });

    it("a source that imports as jobs only refuses --as chain; a conversation source refuses --as job where it has none", async () => {
      const chain = await run([
        "import",
        "swe-agent",
        `${fixturesRoot}swe-agent`,
        "--into",
        db.target,
        "--subject",
        "usage",
        "--as",
        "chain",
      ]);
      expect(chain.code).toBe(2);
      expect(chain.err).toMatch(/swe-agent imports as jobs only/);
      const job = await run([
        "import",
        "claude-code",
        `${fixturesRoot}claude-code/2.1-subagents`,
        "--into",
        db.target,
        "--subject",
        "usage",
        "--as",
        "job",
      ]);
      expect(job.code).toBe(2);
      expect(job.err).toMatch(/claude-code imports as chains only/);
    });
  },
);
