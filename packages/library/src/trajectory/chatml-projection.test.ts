import { describe, expect, it } from "vitest";
import { TURN_1, TURN_2, workedExampleRows } from "../../../../test/support/trajectory-fixtures.js";
import { TRAJECTORY_ITEM_TYPES } from "./items.js";
import {
  projectItemsToChatML,
  projectTrajectoryToChatML,
  storedTurnItemSchema,
  trajectoryItemSchema,
  type StoredTurnItem,
  type TrajectoryItem,
} from "./index.js";

const row = (turn: string, position: number, item: TrajectoryItem, key = `k${position}`) =>
  ({ turn_id: turn, position, revision: 1, item_key: key, item }) satisfies StoredTurnItem;

describe("item and row schemas", () => {
  it("B7 every row of the worked example is a valid stored row", () => {
    for (const stored of workedExampleRows) {
      expect(storedTurnItemSchema.safeParse(stored).success).toBe(true);
    }
  });

  it("B7 refuses unknown item types, unknown fields and bad execution mechanisms", () => {
    expect(trajectoryItemSchema.safeParse({ type: "memo", text: "x" }).success).toBe(false);
    expect(
      trajectoryItemSchema.safeParse({ type: "agent_message", text: "x", extra: 1 }).success,
    ).toBe(false);
    expect(
      trajectoryItemSchema.safeParse({
        type: "tool_result",
        call_id: "c",
        name: "n",
        output: "",
        is_error: false,
        execution_mechanism: "remote",
      }).success,
    ).toBe(false);
    const base = {
      turn_id: "t",
      position: 0,
      revision: 1,
      item_key: "k",
      item: { type: "error", message: "m" },
    };
    expect(storedTurnItemSchema.safeParse(base).success).toBe(true);
    expect(storedTurnItemSchema.safeParse({ ...base, position: -1 }).success).toBe(false);
    expect(storedTurnItemSchema.safeParse({ ...base, revision: 0 }).success).toBe(false);
    expect(storedTurnItemSchema.safeParse({ ...base, item_key: "" }).success).toBe(false);
    expect(storedTurnItemSchema.safeParse({ ...base, job_id: "j" }).success).toBe(false);
  });

  it("lists every item type the schema accepts", () => {
    expect(TRAJECTORY_ITEM_TYPES).toHaveLength(12);
  });
});

describe("ChatML projection", () => {
  it("B9 B15 projects the worked example to canonical ChatML roles in order", () => {
    const chatml = projectTrajectoryToChatML(workedExampleRows);
    expect(chatml.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "user",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(chatml.turns).toEqual([
      { turn_id: TURN_1, message_count: 4 },
      { turn_id: TURN_2, message_count: 5 },
    ]);
    expect(chatml.metadata).toEqual({ redacted: true, content_truncated: false });
    expect(chatml.messages[1]).toEqual({
      role: "assistant",
      content: "Looking it up.",
      tool_calls: [
        {
          id: "IDcall_aaa111",
          type: "function",
          function: { name: "lookup", arguments: '{"q":"v2 release date"}' },
        },
        {
          id: "IDcall_bbb222",
          type: "function",
          function: { name: "lookup", arguments: '{"q":"v2 release date"}' },
        },
      ],
    });
  });

  it("B9 items that map to no message are skipped by the projection and stay in the rows", () => {
    const items: TrajectoryItem[] = [
      { type: "reasoning", summary: ["think"] },
      { type: "plan", steps: [{ step: "a", status: "pending" }] },
      { type: "error", message: "rate limited", retryable: true },
      { type: "notice", kind: "change_agent_state", text: "Agent state changed to init" },
    ];
    expect(projectItemsToChatML(items)).toEqual([]);
    const rows = items.map((item, index) => row("t", index, item));
    const chatml = projectTrajectoryToChatML(rows);
    expect(chatml.messages).toEqual([]);
    expect(chatml.turns).toEqual([{ turn_id: "t", message_count: 0 }]);
    expect(rows).toHaveLength(4);
  });

  it("B10 tool result messages carry metadata.execution_mechanism", () => {
    const chatml = projectTrajectoryToChatML(workedExampleRows);
    const tools = chatml.messages.filter((message) => message.role === "tool");
    expect(tools.map((message) => message.metadata?.execution_mechanism)).toEqual([
      "local_dynamic",
      "provider_hosted",
      "local_dynamic",
    ]);
  });

  it("B9 turns recorded before the item stream (no rows) show an empty trajectory", () => {
    expect(projectTrajectoryToChatML([], { turnOrder: ["old-1", "old-2"] })).toEqual({
      messages: [],
      metadata: { redacted: false, content_truncated: false },
      turns: [
        { turn_id: "old-1", message_count: 0 },
        { turn_id: "old-2", message_count: 0 },
      ],
    });
    expect(projectTrajectoryToChatML([]).messages).toEqual([]);
  });

  it("B9 orders rows by position within a turn whatever order they come in", () => {
    const shuffled = [...workedExampleRows].reverse();
    expect(projectTrajectoryToChatML(shuffled, { turnOrder: [TURN_1, TURN_2] })).toEqual(
      projectTrajectoryToChatML(workedExampleRows),
    );
  });

  it("refuses rows with a missing or repeated position or a repeated item key", () => {
    const a: TrajectoryItem = { type: "agent_message", text: "a" };
    expect(() => projectTrajectoryToChatML([row("t", 0, a), row("t", 2, a)])).toThrow(
      /position 1 is missing/,
    );
    expect(() => projectTrajectoryToChatML([row("t", 0, a), row("t", 0, a, "other")])).toThrow(
      /position 0 appears twice/,
    );
    expect(() =>
      projectTrajectoryToChatML([row("t", 0, a, "same"), row("t", 1, a, "same")]),
    ).toThrow(/item key "same" appears twice/);
  });

  it("B9 projects built-in items as a call and, once ended, its result", () => {
    const messages = projectItemsToChatML([
      {
        type: "command_execution",
        call_id: "c1",
        command: ["false"],
        status: "failed",
        output: "",
        exit_code: 1,
        execution_mechanism: "local_dynamic",
      },
      {
        type: "file_change",
        call_id: "c2",
        changes: [{ path: "a.txt", kind: "add", diff: "+a" }],
        status: "completed",
        execution_mechanism: "local_dynamic",
      },
      {
        type: "web_search",
        call_id: "c3",
        query: "verbatim",
        status: "completed",
        results: [{ title: "T", url: "https://example.com", snippet: "S" }],
        execution_mechanism: "provider_hosted",
      },
      {
        type: "command_execution",
        call_id: "c4",
        command: ["sleep", "9"],
        status: "in_progress",
        output: "",
        exit_code: null,
        execution_mechanism: "local_dynamic",
      },
    ]);
    expect(messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "shell", arguments: '{"command":["false"]}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "c1",
        name: "shell",
        content: "[exit code 1]",
        metadata: { execution_mechanism: "local_dynamic" },
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c2",
            type: "function",
            function: {
              name: "apply_patch",
              arguments: '{"changes":[{"path":"a.txt","kind":"add","diff":"+a"}]}',
            },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "c2",
        name: "apply_patch",
        content: "[applied]",
        metadata: { execution_mechanism: "local_dynamic" },
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c3",
            type: "function",
            function: { name: "web_search", arguments: '{"query":"verbatim"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "c3",
        name: "web_search",
        content: '[{"title":"T","url":"https://example.com","snippet":"S"}]',
        metadata: { execution_mechanism: "provider_hosted" },
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c4",
            type: "function",
            function: { name: "shell", arguments: '{"command":["sleep","9"]}' },
          },
        ],
      },
    ]);
  });

  it("B15 system messages, images and per-message facts keep the standard shape", () => {
    expect(
      projectItemsToChatML([
        { type: "system_message", text: "Be brief." },
        {
          type: "user_message",
          text: "What is this?",
          images: [{ url: "data:image/png;base64,iVBO" }],
          content_truncated: true,
        },
      ]),
    ).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBO" } },
        ],
        metadata: { content_truncated: true },
      },
    ]);
  });
});
