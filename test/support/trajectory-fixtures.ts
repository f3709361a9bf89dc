import type {
  StoredTurnItem,
  TrajectoryItem,
} from "../../packages/library/src/trajectory/index.js";

/**
 * A job trajectory of two turns used across the trajectory tests and the worked example of
 * docs/trajectories.md. Every stored identity in it starts with an `ID` marker so a test can
 * check that none of them reaches the model-visible bytes.
 */
export const TURN_1 = "IDturn-7f3a";
export const TURN_2 = "IDturn-9c41";

function row(
  turn_id: string,
  position: number,
  revision: number,
  item_key: string,
  item: TrajectoryItem,
): StoredTurnItem {
  return { turn_id, position, revision, item_key, item };
}

export const workedExampleRows: readonly StoredTurnItem[] = [
  row(TURN_1, 0, 1, "client:IDmsg-01", {
    type: "user_message",
    text: "Find the release date of v2 and check the changelog builds.",
  }),
  row(TURN_1, 1, 1, "IDitem-rs1", {
    type: "reasoning",
    summary: ["Look up the docs first."],
    provider_item_id: "IDrs_0a1b",
  }),
  row(TURN_1, 2, 1, "IDitem-m1", {
    type: "agent_message",
    text: "Looking it up.",
    provider_item_id: "IDmsg_55aa",
    provider_response_id: "IDresp_77cc",
  }),
  row(TURN_1, 3, 1, "IDitem-c1", {
    type: "tool_call",
    call_id: "IDcall_aaa111",
    name: "lookup",
    arguments: '{"q":"v2 release date"}',
    execution_mechanism: "local_dynamic",
  }),
  row(TURN_1, 4, 1, "IDitem-c2", {
    type: "tool_call",
    call_id: "IDcall_bbb222",
    name: "lookup",
    arguments: '{"q":"v2 release date"}',
    execution_mechanism: "provider_hosted",
  }),
  row(TURN_1, 5, 1, "IDitem-r1", {
    type: "tool_result",
    call_id: "IDcall_aaa111",
    name: "lookup",
    output: "docs: v2 ships 2026-03-01",
    is_error: false,
    execution_mechanism: "local_dynamic",
  }),
  row(TURN_1, 6, 1, "IDitem-r2", {
    type: "tool_result",
    call_id: "IDcall_bbb222",
    name: "lookup",
    output: "web: v2 released March 1",
    is_error: false,
    execution_mechanism: "provider_hosted",
  }),
  row(TURN_1, 7, 1, "IDitem-p1", {
    type: "plan",
    steps: [
      { step: "Find the date", status: "completed" },
      { step: "Build the changelog", status: "pending" },
    ],
  }),
  row(TURN_2, 0, 1, "client:IDmsg-02", { type: "user_message", text: "Now build it." }),
  row(TURN_2, 1, 2, "client:IDmsg-03", {
    type: "user_message",
    text: "Use the release profile. Token [redacted:bearer_token] is set.",
    redacted: true,
  }),
  row(TURN_2, 2, 2, "IDitem-x1", {
    type: "command_execution",
    call_id: "IDcall_ccc333",
    command: ["make", "changelog", "PROFILE=release"],
    cwd: "/work",
    status: "completed",
    output: "built CHANGELOG.md",
    exit_code: 0,
    execution_mechanism: "local_dynamic",
  }),
  row(TURN_2, 3, 2, "IDitem-m2", {
    type: "agent_message",
    text: "v2 shipped on 2026-03-01; the changelog builds.",
    provider_response_id: "IDresp_88dd",
  }),
];

/** Every stored identity in the worked example (ids, keys, provider ids). */
export function storedIdentities(rows: readonly StoredTurnItem[]): string[] {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === "string") {
      for (const match of value.matchAll(/ID[A-Za-z0-9_-]+/g)) found.add(match[0]);
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(visit);
  };
  visit(rows);
  return [...found];
}
