import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { importTrajectoryFile } from "../../packages/library/src/interop/index.js";
import { trajectoryJobs } from "../../packages/library/src/internal/index.js";
import { projectTrajectoryToChatML } from "../../packages/library/src/trajectory/index.js";
import { fixturesRoot } from "./fixture-files.js";

type Json = Record<string, unknown>;
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const guiMode = `${fixturesRoot}openhands/events/basic_gui_mode.json`;

describe("issue 31: usage and cost of imported trajectories", () => {
  it("issue 31 B7 OpenHands: each model response's usage is on the first item of its action, as the file has it", () => {
    const events = readJson(guiMode) as Json[];
    // Independently: the usage of each distinct model response behind an action.
    const seen = new Set<string>();
    const expected: { input: number; output: number; cacheRead: number; cacheWrite: number }[] = [];
    for (const event of events) {
      if (event["action"] === undefined) continue;
      const response = (event["tool_call_metadata"] as Json | undefined)?.["model_response"] as
        Json | undefined;
      if (response === undefined || seen.has(String(response["id"]))) continue;
      seen.add(String(response["id"]));
      const usage = response["usage"] as Json;
      expected.push({
        input: usage["prompt_tokens"] as number,
        output: usage["completion_tokens"] as number,
        cacheRead: usage["cache_read_input_tokens"] as number,
        cacheWrite: usage["cache_creation_input_tokens"] as number,
      });
    }
    expect(expected.length).toBe(4);
    const result = importTrajectoryFile("openhands", guiMode, readFileSync(guiMode));
    const usages = result.rows.flatMap((row) => (row.item.usage === undefined ? [] : [row.item]));
    expect(
      usages.map((item) => ({
        input: item.usage?.input_tokens,
        output: item.usage?.output_tokens,
        cacheRead: item.usage?.cache_read_tokens,
        cacheWrite: item.usage?.cache_write_tokens,
      })),
    ).toEqual(expected);
    expect(usages.every((item) => item.usage?.model === "claude-3-5-sonnet-20241022")).toBe(true);
  });

  it("issue 31 B9 OpenHands: an environment action (change_agent_state) is a notice, not a tool call the model made", () => {
    const events = readJson(guiMode) as Json[];
    const agentCalls = events.filter(
      (event) =>
        event["source"] === "agent" &&
        typeof event["action"] === "string" &&
        !["message", "finish", "system"].includes(event["action"]),
    );
    expect(agentCalls.length).toBe(4);
    const result = importTrajectoryFile("openhands", guiMode, readFileSync(guiMode));
    const calls = projectTrajectoryToChatML(result.rows).messages.flatMap((message) =>
      message.role === "assistant" ? (message.tool_calls ?? []) : [],
    );
    expect(calls.length).toBe(agentCalls.length);
    expect(calls.map((call) => call.function.name)).not.toContain("change_agent_state");
    const notices = result.rows.filter((row) => row.item.type === "notice");
    expect(notices.map((row) => row.item)).toEqual([
      {
        type: "notice",
        kind: "change_agent_state",
        text: "Agent state changed to init",
        details: '{"agent_state":"init"}',
      },
    ]);
  });

  it("issue 31 OpenHands resolver: the line's metrics are the job's totals", () => {
    const file = `${fixturesRoot}openhands/resolver/output.jsonl`;
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Json);
    const result = importTrajectoryFile("openhands", file, readFileSync(file));
    const jobs = trajectoryJobs("openhands", result.rows, result.jobUsage);
    expect(jobs.map((job) => job.usage?.[0]?.cost_usd)).toEqual(
      lines.map((line) => (line["metrics"] as Json)["accumulated_cost"]),
    );
    expect(jobs.map((job) => job.usage?.[0]?.calls)).toEqual(
      lines.map((line) => ((line["metrics"] as Json)["costs"] as unknown[]).length),
    );
    expect(result.leftOut.some((entry) => entry.what === "metrics")).toBe(false);
  });

  it("issue 31 SWE-agent: info.model_stats are the job's totals, not invented per turn", () => {
    for (const name of ["6e44b9__sweagenttestrepo-1c2844.traj", "pydicom__pydicom-1458.traj"]) {
      const file = `${fixturesRoot}swe-agent/${name}`;
      const stats = ((readJson(file) as Json)["info"] as Json)["model_stats"] as Json;
      const result = importTrajectoryFile("swe-agent", file, readFileSync(file));
      const [job] = trajectoryJobs("swe-agent", result.rows, result.jobUsage);
      expect(job?.usage).toEqual([
        {
          input_tokens: stats["tokens_sent"],
          output_tokens: stats["tokens_received"],
          cost_usd: stats["instance_cost"],
          calls: stats["api_calls"],
        },
      ]);
      expect(result.rows.some((row) => row.item.usage !== undefined)).toBe(false);
    }
  });

  it("issue 31 Inspect: model events' usage is on the assistant message they produced; the sample's model_usage is the job's totals", () => {
    for (const name of ["log_images.json", "log_read_sample.json"]) {
      const file = `${fixturesRoot}inspect/${name}`;
      const sample = ((readJson(file) as Json)["samples"] as Json[])[0] as Json;
      const modelEvents = (sample["events"] as Json[]).filter(
        (event) => event["event"] === "model",
      );
      const result = importTrajectoryFile("inspect", file, readFileSync(file));
      const withUsage = result.rows.filter((row) => row.item.usage !== undefined);
      expect(withUsage.map((row) => row.item.type)).toEqual(modelEvents.map(() => "agent_message"));
      expect(withUsage.map((row) => row.item.usage)).toEqual(
        modelEvents.map((event) => {
          const usage = (event["output"] as Json)["usage"] as Json;
          return {
            model: event["model"],
            input_tokens: usage["input_tokens"],
            output_tokens: usage["output_tokens"],
            total_tokens: usage["total_tokens"],
          };
        }),
      );
      const [job] = trajectoryJobs("inspect", result.rows, result.jobUsage);
      const modelUsage = sample["model_usage"] as Record<string, Json>;
      expect(job?.usage).toEqual(
        Object.entries(modelUsage).map(([model, usage]) => ({
          model,
          input_tokens: usage["input_tokens"],
          output_tokens: usage["output_tokens"],
          total_tokens: usage["total_tokens"],
        })),
      );
    }
  });

  it("issue 31 Inspect: a sample whose attachment references would blow up is refused and reported; the others import", () => {
    const big = "x".repeat(500_000);
    const hash = "0123456789abcdef0123456789abcdef";
    const bomb = {
      id: "bomb",
      epoch: 1,
      messages: Array.from({ length: 600 }, () => ({
        role: "user",
        content: `attachment://${hash}`,
      })),
      attachments: { [hash]: big },
    };
    const fine = {
      id: "fine",
      epoch: 1,
      messages: [
        { role: "user", content: `attachment://${hash}` },
        { role: "assistant", content: "ok" },
      ],
      attachments: { [hash]: "a question" },
    };
    const log = { eval: { task: "t", eval_id: "e" }, samples: [bomb, fine] };
    const bytes = Buffer.from(JSON.stringify(log));
    const result = importTrajectoryFile("inspect", "bomb.json", bytes);
    const written = result.rows.reduce((sum, row) => sum + JSON.stringify(row).length, 0);
    expect(written).toBeLessThan(bytes.length);
    expect(result.rows.map((row) => row.turn_id)).toEqual([
      "inspect:t:e:fine:1",
      "inspect:t:e:fine:1",
    ]);
    const refused = result.leftOut.find((entry) => entry.what === "sample bomb epoch 1");
    expect(refused?.reason).toMatch(/^refused: its attachment:\/\/ and tc:\/\/ references expand/);
    expect(refused?.lines.length).toBe(600);
    expect(result.account).toMatchObject({ imported: 2, leftOut: 600 });
  });
});
