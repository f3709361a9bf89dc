import { describe, expect, it } from "vitest";
import {
  storedIdentities,
  workedExampleRows,
} from "../../../../test/support/trajectory-fixtures.js";
import type { ChatMLMessage } from "../history/chatml.js";
import type { Message } from "../history/message.js";
import {
  modelVisibleJson,
  modelVisibleTrajectory,
  projectGatewayMessagesToChatML,
  projectTrajectoryToChatML,
  type ChatMLTrajectory,
} from "./index.js";

describe("model-visible projection", () => {
  const chatml = projectTrajectoryToChatML(workedExampleRows);
  const visible = modelVisibleTrajectory(chatml);
  const bytes = modelVisibleJson(visible);

  it("B2 B12 no stored identity (item keys, turn ids, call ids, provider ids) reaches the model", () => {
    const identities = storedIdentities(workedExampleRows);
    expect(identities.length).toBeGreaterThan(15);
    for (const identity of identities) expect(bytes).not.toContain(identity);
    expect(bytes).not.toMatch(/"(position|revision|item_key|turn_id|turns|status|provider_\w+)":/);
  });

  it("B12 replaces call ids with call_1, call_2 … numbered within each turn and keeps pairs", () => {
    const ids = visible.messages.flatMap((message) =>
      message.role === "assistant"
        ? (message.tool_calls ?? []).map((call) => `call ${call.id}`)
        : message.role === "tool"
          ? [`result ${message.tool_call_id}`]
          : [],
    );
    expect(ids).toEqual([
      "call call_1",
      "call call_2",
      "result call_1",
      "result call_2",
      "call call_1",
      "result call_1",
    ]);
    // call_1 of turn 1 answers with the docs result, call_2 with the web result.
    const tools = visible.messages.filter((message) => message.role === "tool");
    expect(tools[0]?.content).toBe("docs: v2 ships 2026-03-01");
    expect(tools[1]?.content).toBe("web: v2 released March 1");
  });

  it("B12 keeps roles, content and order, and the trajectory-level facts", () => {
    expect(visible.messages.map((message) => message.role)).toEqual(
      chatml.messages.map((message) => message.role),
    );
    expect(visible.messages.map((message) => message.content)).toEqual(
      chatml.messages.map((message) => message.content),
    );
    expect(visible.metadata).toEqual({ redacted: true, content_truncated: false });
    expect(Object.keys(visible)).toEqual(["messages", "metadata"]);
  });

  it("B10 two tools with one display name stay distinguishable by execution_mechanism", () => {
    const lookups = visible.messages.filter(
      (message) => message.role === "tool" && message.name === "lookup",
    );
    expect(lookups.map((message) => message.metadata?.execution_mechanism)).toEqual([
      "local_dynamic",
      "provider_hosted",
    ]);
  });

  it("B12 the same trajectory always gives the same bytes", () => {
    const again = modelVisibleJson(
      modelVisibleTrajectory(
        projectTrajectoryToChatML(
          JSON.parse(JSON.stringify(workedExampleRows)) as typeof workedExampleRows,
        ),
      ),
    );
    expect(again).toBe(bytes);
    expect(bytes).toMatchSnapshot();
  });

  it("B12 drops fields a message carries at run time beyond the standard shape", () => {
    const withWireFields = {
      messages: [
        {
          role: "user",
          content: "hi",
          id: "IDmsg-x",
          status: "completed",
          metadata: { redacted: true },
        },
        {
          role: "assistant",
          content: null,
          response_id: "IDresp-y",
          tool_calls: [
            {
              id: "IDcall-z",
              type: "function",
              function: { name: "f", arguments: "{}" },
              index: 0,
            },
          ],
        },
        { role: "tool", tool_call_id: "IDcall-z", content: "ok", previous_message_id: "IDmsg-w" },
      ] as unknown as ChatMLMessage[],
      metadata: { redacted: false, content_truncated: false },
      turns: [],
    } satisfies ChatMLTrajectory;
    expect(modelVisibleJson(modelVisibleTrajectory(withWireFields))).toBe(
      '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"ok"}],"metadata":{"redacted":false,"content_truncated":false}}',
    );
  });

  it("refuses turns that do not cover the messages", () => {
    expect(() =>
      modelVisibleTrajectory({ ...chatml, turns: [{ turn_id: "x", message_count: 1 }] }),
    ).toThrow(/turns cover 1 messages but the trajectory has 9/);
  });
});

describe("gateway messages", () => {
  const conversation: Message[] = [
    { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "toolCall", id: "IDtoolu_01", name: "weather", arguments: '{"city":"Paris"}' },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "toolResult",
          callID: "IDtoolu_01",
          toolName: "weather",
          isError: false,
          content: "18C",
        },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "18C." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "And this?" },
        { type: "imageOmitted", mimeType: "image/png" },
      ],
    },
    {
      role: "assistant",
      content: [{ type: "toolCall", id: "IDtoolu_02", name: "weather", argumentsBase64: "/w==" }],
    },
    {
      role: "user",
      content: [
        {
          type: "toolResult",
          callID: "IDtoolu_02",
          toolName: "weather",
          isError: true,
          content: "bad",
        },
        { type: "text", text: "Try again." },
      ],
    },
  ];

  it("B9 B15 gateway messages project to the same ChatML shape as job items", () => {
    const chatml = projectGatewayMessagesToChatML(conversation);
    expect(chatml.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          {
            id: "IDtoolu_01",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "IDtoolu_01",
        name: "weather",
        content: "18C",
        metadata: { execution_mechanism: "local_dynamic" },
      },
      { role: "assistant", content: "18C." },
      {
        role: "user",
        content: [
          { type: "text", text: "And this?" },
          {
            type: "text",
            text: "[Image omitted: an image was here but was dropped from the saved conversation to save space.]",
          },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "IDtoolu_02",
            type: "function",
            function: { name: "weather", arguments: "\uFFFD" },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "IDtoolu_02",
        name: "weather",
        content: "bad",
        metadata: { execution_mechanism: "local_dynamic" },
      },
      { role: "user", content: "Try again." },
    ]);
    expect(chatml.turns).toEqual([
      { message_count: 4 },
      { message_count: 3 },
      { message_count: 1 },
    ]);
  });

  it("B12 gateway model-visible view aliases call ids per turn and keeps pairs", () => {
    const visible = modelVisibleJson(
      modelVisibleTrajectory(projectGatewayMessagesToChatML(conversation)),
    );
    expect(visible).not.toContain("IDtoolu");
    expect(visible).toContain('"tool_call_id":"call_1","name":"weather","content":"18C"');
    expect(visible).toContain('"tool_call_id":"call_1","name":"weather","content":"bad"');
  });

  it("B10 the execution mechanism of gateway tool results is configurable; images use their bytes", () => {
    const chatml = projectGatewayMessagesToChatML(
      [
        {
          role: "tool",
          content: [
            { type: "toolResult", callID: "a", toolName: "t", isError: false, content: "x" },
          ],
        },
        {
          role: "user",
          content: [{ type: "image", sha256: "a".repeat(64), mimeType: "image/png" }],
        },
      ],
      { executionMechanism: () => "provider_hosted", imageBytes: () => new Uint8Array([1, 2, 3]) },
    );
    expect(chatml.messages[0]?.metadata?.execution_mechanism).toBe("provider_hosted");
    expect(chatml.messages[1]).toEqual({
      role: "user",
      content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AQID" } }],
    });
  });
});
