import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import {
  modelVisibleJson,
  modelVisibleTrajectory,
  projectGatewayMessagesToChatML,
} from "verbatim-llm/trajectory";
import { GatewayMessageStore } from "../conversations/message-store.js";

describeEachDialect("projection of stored gateway messages", (getDatabase) => {
  it("B2 B9 B12 stored gateway messages project to ChatML and reach the model without any stored id", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("subject");
    const stored = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
        {
          role: "assistant",
          content: [
            {
              type: "toolCall",
              id: "toolu_01A9xYz",
              name: "weather",
              arguments: '{"city":"Paris"}',
            },
          ],
          gateway: { model: "m-1", provider: "anthropic", providerResponseId: "msg_01PROVIDERxyz" },
        },
        {
          role: "tool",
          content: [
            {
              type: "toolResult",
              callID: "toolu_01A9xYz",
              toolName: "weather",
              isError: false,
              content: "18C",
            },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "18C in Paris." }],
          gateway: { providerResponseId: "msg_02PROVIDERabc" },
        },
      ],
    });
    const anchor = stored[stored.length - 1]?.id ?? "";
    const context = await store.readContext(subject, anchor);
    const chatml = projectGatewayMessagesToChatML(
      context.messages.map((message) => ({ role: message.role, content: message.content })),
    );
    expect(chatml.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    const bytes = modelVisibleJson(modelVisibleTrajectory(chatml));
    const identities = [
      subject,
      context.anchor.conversationId,
      ...context.messages.map((message) => message.id),
      "toolu_01A9xYz",
      "msg_01PROVIDERxyz",
      "msg_02PROVIDERabc",
    ];
    for (const identity of identities) expect(bytes).not.toContain(identity);
    expect(bytes).toBe(
      '{"messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},{"role":"tool","tool_call_id":"call_1","name":"weather","content":"18C","metadata":{"execution_mechanism":"local_dynamic"}},{"role":"assistant","content":"18C in Paris."}],"metadata":{"redacted":false,"content_truncated":false}}',
    );
  });
});
