/**
 * Regression (issue 15, the stored-text rule): a summary a model wrote with a lone surrogate
 * was answered `gateway_summary_failed` ("the model returned no summary text") and lost, and
 * with a NUL it would be refused as the caller's fault. What a model writes is repaired, not
 * refused: each lone surrogate or NUL becomes U+FFFD, in the text and in the call's facts. A
 * summary the caller passes is still refused by the rule (it is the caller's to fix). B6.
 */
import { expect, it } from "vitest";
import { compressContext } from "../../packages/server/src/gateway/conversations/compression.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { Summarizer } from "../../packages/server/src/gateway/conversations/summarizer.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";

describeEachDialect("model-written summary breaking the stored-text rule", (getDatabase) => {
  const start = async (subject: string) => {
    const store = new GatewayMessageStore(getDatabase());
    const [message] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "Count to two." }] },
        { role: "assistant", content: [{ type: "text", text: "One, two." }] },
      ],
    });
    const rows = await store.listMessages(subject, message?.conversationId ?? "", {
      limit: 10,
      offset: 0,
    });
    return { store, anchor: rows[rows.length - 1]?.id ?? "" };
  };

  it("B6 a model's lone surrogates and NULs become U+FFFD; the summary is stored and read back", async () => {
    const subject = uniqueName("subject");
    const { store, anchor } = await start(subject);
    const summarizer: Summarizer = {
      summarize: async () => ({
        text: "They counted\ud800 to two\u0000.",
        model: "model\udc00",
        provider: "anthropic",
        providerResponseId: "msg_\u0000",
      }),
    };
    const summary = await compressContext(store, subject, { anchorId: anchor, summarizer });
    const stored = await new GatewayMessageStore(getDatabase(), { cacheBytes: 0 }).getMessage(
      subject,
      summary.id,
    );
    expect(stored.content).toEqual([{ type: "text", text: "They counted\ufffd to two\ufffd." }]);
    expect(stored.metadata.gateway.model).toBe("model\ufffd");
    expect(stored.metadata.gateway.providerResponseId).toBe("msg_\ufffd");
  });

  it("B6 a summary the caller passes with a NUL is refused, and nothing is written", async () => {
    const subject = uniqueName("subject");
    const { store, anchor } = await start(subject);
    await expect(
      compressContext(store, subject, { anchorId: anchor, summary: "They counted\u0000." }),
    ).rejects.toMatchObject({ code: "gateway_input_invalid" });
    const context = await store.readContext(subject, anchor);
    expect(context.messages.map((message) => message.type)).toEqual(["user", "assistant"]);
  });
});
