import { mkdtemp, rm, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openLiveConversation } from "./open.js";
import { gate, scriptedBackend } from "../../../../test/support/scripted-backend.js";
import {
  changeRecorder,
  counterIds,
  deleteTool,
  testPrices,
} from "../../../../test/support/conversation-fixtures.js";

const folders: string[] = [];
async function packageFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "verbatim-conversation-"));
  folders.push(dir);
  const pkg = join(dir, "Poster.pkg");
  await mkdir(pkg);
  return pkg;
}
afterEach(async () => {
  for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("reopening (real package folders)", () => {
  it("A10a a conversation saved in the middle of a queued message reopens with the message queued, and resume() runs it", async () => {
    const pkg = await packageFolder();
    const hold = gate();
    const first = await openLiveConversation(pkg, {
      backend: scriptedBackend([{ text: "Working…", wait: hold.promise }]),
      newId: counterIds("A"),
      prices: testPrices,
    });
    first.conversation.send("one");
    first.conversation.send("two");
    await first.save(); // autosave while the turn runs and "two" waits
    first.conversation.cancel();

    const recorder = changeRecorder();
    const backend = scriptedBackend([{ text: "Second answer." }]);
    const second = await openLiveConversation(pkg, {
      backend,
      newId: counterIds("B"),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    const restored = second.conversation.snapshot();
    expect(restored.queued.map((message) => message.text)).toEqual(["two"]);
    expect(restored.items.map((item) => item.type)).toEqual(["user"]);
    expect(recorder.changes).toEqual([]);
    expect(second.conversation.resume()).toBe(true);
    await second.conversation.whenIdle();
    const saved = second.conversation.snapshot();
    expect(saved.queued).toEqual([]);
    expect(saved.history.map((message) => message.role)).toEqual(["user", "user", "assistant"]);
    expect(saved.sentFacts).toEqual([{ message: 0 }, { message: 1 }]);
    expect(recorder.changes).toEqual(["turnEnd"]);
  });

  it("A10a a pending tool approval saved to the package can be answered after reopening and the turn goes on", async () => {
    const pkg = await packageFolder();
    const first = await openLiveConversation(pkg, {
      backend: scriptedBackend([
        {
          text: "Deleting.",
          calls: [{ id: "toolu_9", name: "delete_page", arguments: '{"page":"2"}' }],
        },
      ]),
      tools: [deleteTool()],
      newId: counterIds("A"),
      prices: testPrices,
    });
    first.conversation.send("Delete page 2");
    await first.conversation.whenIdle();
    expect(first.conversation.awaitingApproval).toBe(true);
    const approval = first.conversation.items.find((item) => item.type === "toolApproval");
    expect(approval).toMatchObject({
      callID: "toolu_9",
      toolName: "delete_page",
      summary: 'Delete {"page":"2"}',
    });
    expect(first.conversation.snapshot().approvalCards.get(approval?.id ?? "")).toEqual({
      state: "pending",
    });
    await first.save();

    const deleted: string[] = [];
    const backend = scriptedBackend([{ text: "Page 2 is gone." }]);
    const second = await openLiveConversation(pkg, {
      backend,
      tools: [deleteTool(deleted)],
      newId: counterIds("B"),
      prices: testPrices,
    });
    expect(second.conversation.awaitingApproval).toBe(true);
    expect(second.conversation.running).toBe(false);
    const queued = second.conversation.send("and then page 3");
    expect(queued.status).toBe("queued");
    backend.push({ text: "Page 3 too." });
    second.conversation.answerApproval(approval?.id ?? "", { approved: true });
    await second.conversation.whenIdle();
    expect(deleted).toEqual(['{"page":"2"}']);
    const saved = second.conversation.snapshot();
    expect(saved.approvalCards.get(approval?.id ?? "")).toEqual({ state: "approved" });
    expect(saved.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(backend.requests[0]?.history).toEqual(saved.history.slice(0, 3));
    expect(saved.sentFacts).toEqual([{ message: 0 }, { message: 4 }]);
    expect(() =>
      second.conversation.answerApproval(approval?.id ?? "", { approved: false }),
    ).toThrow(expect.objectContaining({ code: "approval_already_answered" }));
  });

  it("A10a a denied approval gives the model a denial as the tool's result; alwaysAllow skips later approvals", async () => {
    const deleted: string[] = [];
    const pkg = await packageFolder();
    const backend = scriptedBackend([
      { calls: [{ id: "c1", name: "delete_page", arguments: '{"page":"1"}' }] },
      { text: "Understood, not deleting." },
    ]);
    const opened = await openLiveConversation(pkg, {
      backend,
      tools: [deleteTool(deleted)],
      newId: counterIds(),
      prices: testPrices,
    });
    const conversation = opened.conversation;
    conversation.send("Delete page 1");
    await conversation.whenIdle();
    const first = conversation.items.find((item) => item.type === "toolApproval");
    conversation.answerApproval(first?.id ?? "", { approved: false });
    await conversation.whenIdle();
    expect(deleted).toEqual([]);
    expect(conversation.snapshot().history[2]?.content[0]).toMatchObject({
      type: "toolResult",
      isError: true,
      content: "The user denied this tool call.",
    });
    backend.push(
      { calls: [{ id: "c2", name: "delete_page", arguments: '{"page":"2"}' }] },
      { calls: [{ id: "c3", name: "delete_page", arguments: '{"page":"3"}' }] },
      { text: "Both deleted." },
    );
    conversation.send("Delete pages 2 and 3");
    await conversation.whenIdle();
    const second = conversation.items.filter((item) => item.type === "toolApproval").at(-1);
    conversation.answerApproval(second?.id ?? "", { approved: true, alwaysAllow: true });
    await conversation.whenIdle();
    expect(deleted).toEqual(['{"page":"2"}', '{"page":"3"}']);
    expect(conversation.items.filter((item) => item.type === "toolApproval")).toHaveLength(2);
    expect(conversation.awaitingApproval).toBe(false);
  });

  it("A10a cancelling a turn that waits for approval denies it and closes every open tool call", async () => {
    const pkg = await packageFolder();
    const opened = await openLiveConversation(pkg, {
      backend: scriptedBackend([{ calls: [{ id: "c1", name: "delete_page", arguments: "{}" }] }]),
      tools: [deleteTool()],
      newId: counterIds(),
      prices: testPrices,
    });
    opened.conversation.send("Delete");
    await opened.conversation.whenIdle();
    opened.conversation.cancel();
    const saved = opened.conversation.snapshot();
    expect([...saved.approvalCards.values()]).toEqual([{ state: "denied" }]);
    expect(saved.history[2]?.content[0]).toMatchObject({ type: "toolResult", isError: true });
    expect(opened.conversation.awaitingApproval).toBe(false);
  });
});
