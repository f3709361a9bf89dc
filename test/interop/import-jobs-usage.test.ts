import { expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/index.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { testServer } from "../support/server.js";
import { fixturesRoot } from "./fixture-files.js";

type Json = Record<string, unknown>;

interface Report {
  jobs: { sourceId: string; outcome: string; jobId?: string }[];
}

describeDatabaseTargets("issue 31: usage and cost of imported jobs in the store", (db) => {
  it("issue 31 B7 B14 OpenHands per-call usage stays on the stored items and the job page sums it per turn and for the job", async () => {
    const file = `${fixturesRoot}openhands/events/basic_gui_mode.json`;
    const subject = "usage-openhands";
    const result = await db.run([
      "import",
      "openhands",
      file,
      "--into",
      db.target,
      "--subject",
      subject,
      "--json",
    ]);
    expect(result.err).toBe("");
    const report = JSON.parse(result.out) as Report;
    const jobId = report.jobs[0]?.jobId ?? "";
    expect(report.jobs[0]?.outcome).toBe("imported");
    // Independently: the prompt and completion tokens of each distinct model response.
    const seen = new Set<string>();
    let input = 0;
    let output = 0;
    for (const event of JSON.parse(readFileSync(file, "utf8")) as Json[]) {
      const response = (event["tool_call_metadata"] as Json | undefined)?.["model_response"] as
        Json | undefined;
      if (event["action"] === undefined || response === undefined) continue;
      if (seen.has(String(response["id"]))) continue;
      seen.add(String(response["id"]));
      input += (response["usage"] as Json)["prompt_tokens"] as number;
      output += (response["usage"] as Json)["completion_tokens"] as number;
    }
    const stored = await new BackgroundAgentJobs(db.database).readTrajectory(subject, jobId);
    const usages = stored.rows.flatMap((row) =>
      row.item.usage === undefined ? [] : [row.item.usage],
    );
    expect(usages.length).toBe(seen.size);
    expect(usages.reduce((sum, usage) => sum + (usage.input_tokens ?? 0), 0)).toBe(input);
    const server = await testServer(db.database);
    try {
      const detail = await server.app.inject({
        method: "GET",
        url: `/background-agent-jobs/${jobId}?view=chatml`,
        headers: server.operator,
      });
      expect(detail.statusCode, detail.body).toBe(200);
      const body = detail.json() as {
        usage: { reported: unknown; calls: Json | null };
        turns: { usage: Json | null }[];
      };
      expect(body.usage.reported).toBe(null);
      expect(body.usage.calls).toMatchObject({
        input_tokens: input,
        output_tokens: output,
        calls: seen.size,
      });
      expect(body.turns.map((turn) => turn.usage?.["input_tokens"])).toEqual([input]);
    } finally {
      await server.app.close();
    }
  });

  it("issue 31 B14 SWE-agent model_stats are kept as the job's totals and the job page shows them", async () => {
    const file = `${fixturesRoot}swe-agent/6e44b9__sweagenttestrepo-1c2844.traj`;
    const stats = ((JSON.parse(readFileSync(file, "utf8")) as Json)["info"] as Json)[
      "model_stats"
    ] as Json;
    const subject = "usage-swe-agent";
    const result = await db.run([
      "import",
      "swe-agent",
      file,
      "--into",
      db.target,
      "--subject",
      subject,
      "--json",
    ]);
    const jobId = (JSON.parse(result.out) as Report).jobs[0]?.jobId ?? "";
    const stored = await new BackgroundAgentJobs(db.database).getJob(subject, jobId);
    const expected = {
      input_tokens: stats["tokens_sent"],
      output_tokens: stats["tokens_received"],
      cost_usd: stats["instance_cost"],
      calls: stats["api_calls"],
    };
    expect((stored.result?.result as Json | undefined)?.["usage"]).toEqual([expected]);
    const server = await testServer(db.database);
    try {
      const detail = await server.app.inject({
        method: "GET",
        url: `/background-agent-jobs/${jobId}?view=stored`,
        headers: server.operator,
      });
      expect(detail.statusCode, detail.body).toBe(200);
      const body = detail.json() as { usage: { reported: unknown; calls: unknown } };
      expect(body.usage).toEqual({ reported: [expected], calls: null });
    } finally {
      await server.app.close();
    }
  });
});
