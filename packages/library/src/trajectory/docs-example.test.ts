import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { workedExampleRows } from "../../../../test/support/trajectory-fixtures.js";
import {
  modelVisibleTrajectory,
  parseStoredRowsJsonl,
  projectTrajectoryToChatML,
} from "./index.js";

// The worked example of docs/trajectories.md is checked against the code: the rows, the ChatML
// and the model-visible view shown there are what the projections give.
const doc = readFileSync(new URL("../../../../docs/trajectories.md", import.meta.url), "utf8");
const blocks = [...doc.matchAll(/```(jsonl|json)\n([\s\S]*?)```/g)].map((match) => ({
  kind: match[1],
  text: match[2] ?? "",
}));

describe("docs/trajectories.md worked example", () => {
  it("B9 B12 the rows, ChatML and model-visible blocks match the projections", () => {
    const [rows, chatml, visible] = blocks;
    expect(rows?.kind).toBe("jsonl");
    const parsed = parseStoredRowsJsonl(rows?.text ?? "");
    expect(parsed.problems).toEqual([]);
    expect(parsed.rows).toEqual(workedExampleRows);
    const projected = projectTrajectoryToChatML(parsed.rows);
    expect(JSON.parse(chatml?.text ?? "")).toEqual(projected);
    expect(JSON.parse(visible?.text ?? "")).toEqual(modelVisibleTrajectory(projected));
  });
});
