import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importCodexRolloutAsRows } from "../../packages/library/src/interop/codex/trajectory.js";
import { importInspectLog } from "../../packages/library/src/interop/trajectories/inspect.js";
import {
  importOpenHandsEvents,
  importOpenHandsResolver,
} from "../../packages/library/src/interop/trajectories/openhands.js";
import { importSweAgentTrajectory } from "../../packages/library/src/interop/trajectories/swe-agent.js";
import type { TrajectoryFileImport } from "../../packages/library/src/interop/index.js";
import {
  projectTrajectoryToChatML,
  storedTurnItemSchema,
} from "../../packages/library/src/trajectory/index.js";
import { fixtureFiles, shortName } from "./fixture-files.js";

type Json = Record<string, unknown>;
const read = (file: string): Json => JSON.parse(readFileSync(file, "utf8")) as Json;

/** Every string a row's item holds (text, output, arguments, images' URLs …). */
function strings(value: unknown, into: Set<string>): Set<string> {
  if (typeof value === "string") into.add(value);
  else if (Array.isArray(value)) for (const entry of value) strings(entry, into);
  else if (typeof value === "object" && value !== null)
    for (const entry of Object.values(value)) strings(entry, into);
  return into;
}

/** The text of a chat message's content (string, or its text parts joined by a newline). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? (content as Json[])
        .filter((part) => typeof part.text === "string" && part.type !== "reasoning")
        .map((part) => String(part.text))
        .join("\n")
    : "";
}

function checkRows(result: TrajectoryFileImport): Set<string> {
  expect(result.account.imported + result.account.leftOut).toBe(result.account.lines);
  for (const row of result.rows) expect(storedTurnItemSchema.safeParse(row).success).toBe(true);
  // The rows are ones the projection reads (positions contiguous, keys unique per turn).
  expect(() => projectTrajectoryToChatML(result.rows)).not.toThrow();
  return strings(
    result.rows.map((row) => row.item),
    new Set(),
  );
}

describe("swe-agent importer: every history message becomes items", () => {
  for (const file of fixtureFiles("swe-agent", ".traj")) {
    it(`${shortName(file)}: messages in order, tool calls paired, other fields reported`, () => {
      const result = importSweAgentTrajectory(file, readFileSync(file));
      const held = checkRows(result);
      const history = read(file).history as Json[];
      expect(result.account.lines).toBe(history.length);
      expect(result.account.leftOut).toBe(0);
      for (const message of history) expect(held.has(contentText(message.content))).toBe(true);
      const calls = history.flatMap((message) => (message.tool_calls as Json[] | undefined) ?? []);
      for (const call of calls) expect(held.has(String(call.id))).toBe(true);
      const reported = new Set(result.leftOut.map((entry) => entry.what));
      for (const key of Object.keys(read(file)))
        if (key !== "history") expect(reported.has(key)).toBe(true);
    });
  }
});

describe("openhands importer: events and resolver output", () => {
  for (const file of fixtureFiles("openhands", ".json")) {
    it(`${shortName(file)}: each event imported or reported; observations paired with their actions by cause`, () => {
      const result = importOpenHandsEvents(file, readFileSync(file));
      const held = checkRows(result);
      const events = read(file) as unknown as Json[];
      expect(result.account.lines).toBe(events.length);
      for (const event of events) {
        if (
          event.observation !== undefined &&
          typeof event.content === "string" &&
          event.content !== ""
        ) {
          expect(held.has(event.content)).toBe(true);
        }
        const args = event.args as Json | undefined;
        if (event.action === "message") expect(held.has(String(args?.content))).toBe(true);
      }
    });
  }

  it("resolver output.jsonl: one turn per issue, commands with their output and exit code", () => {
    const file = fixtureFiles("openhands", ".jsonl")[0] ?? "";
    const result = importOpenHandsResolver(file, readFileSync(file));
    checkRows(result);
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Json);
    expect(new Set(result.rows.map((row) => row.turn_id)).size).toBe(lines.length);
    expect(result.account.lines).toBe(
      lines.reduce((sum, line) => sum + (line.history as unknown[]).length, 0),
    );
    const commands = result.rows.filter((row) => row.item.type === "command_execution");
    expect(commands.length).toBeGreaterThan(0);
    for (const row of commands)
      if (row.item.type === "command_execution") expect(row.item.status).toBe("completed");
  });
});

describe("inspect importer: samples as turns, attachment:// and tc:// resolved", () => {
  for (const file of fixtureFiles("inspect", ".json")) {
    it(`${shortName(file)}: every message imported, no reference left unresolved`, () => {
      const result = importInspectLog(file, readFileSync(file));
      const held = checkRows(result);
      const samples = (read(file).samples as Json[] | undefined) ?? [];
      expect(result.account.lines).toBe(
        samples.reduce((sum, sample) => sum + (sample.messages as unknown[]).length, 0),
      );
      for (const text of held) expect(text).not.toMatch(/^(attachment|tc):\/\//);
      expect(result.leftOut.some((entry) => entry.what === "unresolved reference")).toBe(false);
    });
  }

  it("images of a sample are kept as data URLs on the user message", () => {
    const file = fixtureFiles("inspect", "log_images_tc.json")[0] ?? "";
    const user = importInspectLog(file, readFileSync(file)).rows.find(
      (row) => row.item.type === "user_message",
    );
    expect(
      user?.item.type === "user_message" &&
        user.item.images?.[0]?.url.startsWith("data:image/png;base64,"),
    ).toBe(true);
  });
});

describe("codex importer into trajectory rows: one turn per Codex turn", () => {
  for (const file of fixtureFiles("codex", ".jsonl")) {
    it(`${shortName(file)}: every line imported or reported; messages and calls become items`, () => {
      const result = importCodexRolloutAsRows(file, readFileSync(file));
      const held = checkRows(result);
      const lines = readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
      expect(result.account.lines).toBe(lines.length);
      for (const line of lines) {
        const value = JSON.parse(line) as { type?: string; payload?: Json };
        if (value.type !== "response_item") continue;
        const payload = value.payload ?? {};
        if (payload.type === "message") expect(held.has(contentText(payload.content))).toBe(true);
        if (payload.type === "function_call" || payload.type === "custom_tool_call") {
          expect(held.has(String(payload.call_id))).toBe(true);
        }
      }
    });
  }

  it("a rollout with turn ids gives one turn per turn id; one without them a turn per user prompt", () => {
    const withIds =
      fixtureFiles("codex", ".jsonl").find((file) => file.includes("0.129/turn-2.jsonl")) ?? "";
    const turnIds = new Set(
      readFileSync(withIds, "utf8")
        .split("\n")
        .filter((line) => line.includes('"task_started"'))
        .map((line) => String((JSON.parse(line) as { payload: Json }).payload.turn_id)),
    );
    const rows = importCodexRolloutAsRows(withIds, readFileSync(withIds)).rows;
    expect(new Set(rows.map((row) => row.turn_id.split(":").pop()))).toEqual(turnIds);
    const old = fixtureFiles("codex", ".jsonl").find((file) => file.includes("0.47/")) ?? "";
    const oldRows = importCodexRolloutAsRows(old, readFileSync(old)).rows;
    const firstItems = [...new Set(oldRows.map((row) => row.turn_id))].map(
      (turn) => oldRows.find((row) => row.turn_id === turn)?.item.type,
    );
    expect(firstItems.every((type) => type === "user_message")).toBe(true);
  });
});

describe("trajectory importers: a file of another shape is reported, never silently empty", () => {
  it("swe-agent, openhands and inspect report a file without their records", () => {
    const bytes = Buffer.from("[1]");
    const swe = importSweAgentTrajectory("z.traj", bytes);
    const inspect = importInspectLog("z.json", bytes);
    const openhands = importOpenHandsEvents("z.json", Buffer.from('{"events": 1}'));
    for (const result of [swe, inspect, openhands]) {
      expect(result.rows).toEqual([]);
      expect(result.account).toMatchObject({ imported: 0, leftOut: 1 });
      expect(result.leftOut[0]?.what).toBe("file");
    }
  });
});
