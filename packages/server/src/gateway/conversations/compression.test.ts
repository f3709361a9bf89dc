import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import type { Message } from "verbatim-llm/history";
import { compressContext } from "./compression.js";
import { GatewayMessageStore, type AppendMessageInput } from "./message-store.js";
import type { Summarizer, SummaryRequest } from "./summarizer.js";

const say = (role: "user" | "assistant", text: string): AppendMessageInput => ({
  role,
  content: [{ type: "text", text }],
});
const textOf = (message: { content: Message["content"] }) =>
  message.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");

/**
 * A summarizer that writes its summary from what it was given, deterministically: the texts
 * of the messages joined, so a test can see exactly which context it received.
 */
class JoiningSummarizer implements Summarizer {
  readonly requests: SummaryRequest[] = [];
  async summarize(request: SummaryRequest) {
    this.requests.push(request);
    return {
      text: `summary of: ${request.messages.map(textOf).join(" | ")}`,
      model: "summary-model",
      provider: "anthropic",
      usage: { input: 10, output: 3, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
    };
  }
}

describeEachDialect("gateway compression", (getDatabase) => {
  const store = () => new GatewayMessageStore(getDatabase());

  async function chain(subject: string, count: number, previous: string | null = null) {
    const messages = Array.from({ length: count }, (_, index) =>
      say(index % 2 === 0 ? "user" : "assistant", `m${index}`),
    );
    return store().appendMessages(subject, { previousMessageId: previous, messages });
  }

  it("B6 B13 compressing X appends summary S after X; S's context starts at S; X's is unchanged", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 6);
    const x = rows[5]?.id ?? "";
    const before = await store().readContext(subject, x);
    const summary = await compressContext(store(), subject, {
      anchorId: x,
      summary: "The user counted to six.",
    });
    expect(summary.type).toBe("summary");
    expect(summary.role).toBe("user");
    expect(summary.previousMessageId).toBe(x);
    expect(summary.metadata.gateway.compression).toEqual({
      throughMessageId: x,
      fromMessageId: rows[0]?.id,
      messageCount: 6,
      source: "caller",
    });
    const ofSummary = await store().readContext(subject, summary.id);
    expect(ofSummary.messages.map((m) => m.id)).toEqual([summary.id]);
    // S's id is usable as previous_response_id: continuing it starts from the summary.
    const next = await store().appendMessages(subject, {
      previousMessageId: summary.id,
      messages: [say("user", "go on"), say("assistant", "ok")],
    });
    const after = await store().readContext(subject, next[1]?.id ?? "");
    expect(after.messages.map(textOf)).toEqual(["The user counted to six.", "go on", "ok"]);
    // X's own context is unchanged and the old rows stay stored.
    expect((await store().readContext(subject, x)).messages).toEqual(before.messages);
    const full = await store().readFullChain(subject, next[1]?.id ?? "");
    expect(full.map(textOf)).toEqual([
      "m0",
      "m1",
      "m2",
      "m3",
      "m4",
      "m5",
      "The user counted to six.",
      "go on",
      "ok",
    ]);
  });

  it("B6 the summary can come from a model call through a Summarizer", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 4);
    const summarizer = new JoiningSummarizer();
    const summary = await compressContext(store(), subject, {
      anchorId: rows[3]?.id ?? "",
      summarizer,
    });
    expect(summarizer.requests[0]?.messages.map(textOf)).toEqual(["m0", "m1", "m2", "m3"]);
    expect(summarizer.requests[0]?.startsWithSummary).toBe(false);
    expect(textOf(summary)).toBe("summary of: m0 | m1 | m2 | m3");
    expect(summary.metadata.gateway).toMatchObject({
      model: "summary-model",
      provider: "anthropic",
      usage: { input: 10, output: 3 },
      compression: { source: "model", messageCount: 4 },
    });
  });

  it("B6 compressing a chain that holds a summary summarises from that summary on", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 4);
    const summarizer = new JoiningSummarizer();
    const first = await compressContext(store(), subject, {
      anchorId: rows[3]?.id ?? "",
      summary: "S1",
    });
    const more = await chain(subject, 2, first.id);
    const second = await compressContext(store(), subject, {
      anchorId: more[1]?.id ?? "",
      summarizer,
    });
    expect(summarizer.requests[0]?.messages.map(textOf)).toEqual(["S1", "m0", "m1"]);
    expect(summarizer.requests[0]?.startsWithSummary).toBe(true);
    expect(second.metadata.gateway.compression).toMatchObject({
      fromMessageId: first.id,
      messageCount: 3,
    });
    const tail = await chain(subject, 1, second.id);
    expect((await store().readContext(subject, tail[0]?.id ?? "")).messages.map(textOf)).toEqual([
      "summary of: S1 | m0 | m1",
      "m0",
    ]);
  });

  it("B6 a compression of an anchor in the middle forks; the later messages keep their context", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 6);
    const summary = await compressContext(store(), subject, {
      anchorId: rows[2]?.id ?? "",
      summary: "early part",
    });
    expect((await store().readContext(subject, rows[5]?.id ?? "")).messages).toHaveLength(6);
    expect((await store().readContext(subject, summary.id)).messages.map(textOf)).toEqual([
      "early part",
    ]);
  });

  it("B6 a failing model call writes nothing", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 2);
    const failing: Summarizer = {
      summarize: () => Promise.reject(new Error("provider down")),
    };
    const empty: Summarizer = { summarize: () => Promise.resolve({ text: "  " }) };
    for (const summarizer of [failing, empty]) {
      await expect(
        compressContext(store(), subject, { anchorId: rows[1]?.id ?? "", summarizer }),
      ).rejects.toMatchObject({ code: "gateway_summary_failed" });
    }
    expect(await store().listContinuations(subject, rows[1]?.id ?? "")).toEqual([]);
  });

  it("B6 compression with an idempotency key stores one summary", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 2);
    const input = { anchorId: rows[1]?.id ?? "", summary: "once", idempotencyKey: "c-1" };
    const a = await compressContext(store(), subject, input);
    const b = await compressContext(store(), subject, input);
    expect(b.id).toBe(a.id);
    expect(await store().listContinuations(subject, rows[1]?.id ?? "")).toEqual([a.id]);
  });

  it("compression refuses another subject's anchor, or with both or neither summary source", async () => {
    const subject = uniqueName("subject");
    const rows = await chain(subject, 2);
    const anchorId = rows[1]?.id ?? "";
    await expect(
      compressContext(store(), uniqueName("other"), { anchorId, summary: "x" }),
    ).rejects.toMatchObject({ code: "gateway_message_not_found" });
    await expect(compressContext(store(), subject, { anchorId })).rejects.toMatchObject({
      code: "gateway_input_invalid",
    });
    await expect(
      compressContext(store(), subject, {
        anchorId,
        summary: "x",
        summarizer: new JoiningSummarizer(),
      }),
    ).rejects.toMatchObject({ code: "gateway_input_invalid" });
    expect(await store().listContinuations(subject, anchorId)).toEqual([]);
  });
});
