import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../history/message.js";
import { createLiveConversation } from "./live-conversation.js";
import { openLiveConversation } from "./open.js";
import { COMPACTION_INSTRUCTION } from "./compaction.js";
import {
  gate,
  scriptedBackend,
  type ScriptStep,
} from "../../../../test/support/scripted-backend.js";
import {
  changeRecorder,
  counterIds,
  testPrices,
} from "../../../../test/support/conversation-fixtures.js";

const folders: string[] = [];
afterEach(async () => {
  for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function threeTurns(extra: ScriptStep[] = [], sections = false) {
  const backend = scriptedBackend([
    { text: "one done", usage: { input: 100 } },
    { text: "two done", usage: { input: 200 } },
    { text: "three done", usage: { input: 300, cacheRead: 50 } },
    ...extra,
  ]);
  const recorder = changeRecorder();
  const conversation = createLiveConversation({
    backend,
    newId: counterIds(),
    prices: testPrices,
    onChange: recorder.onChange,
    ...(sections ? { sections: () => [{ name: "Document", content: "Page 1" }] } : {}),
  });
  for (const text of ["one", "two", "three"]) {
    conversation.send(text);
    await conversation.whenIdle();
  }
  recorder.changes.length = 0;
  return { backend, conversation, recorder };
}

describe("compaction (A18–A22)", () => {
  it("A19 the preview shows the last request's total input and its estimated cost", async () => {
    const { conversation } = await threeTurns();
    expect(conversation.compactionPreview()).toEqual({
      available: true,
      inputTokens: 350,
      estimatedCost: { kind: "estimated", dollars: 0.00035 },
    });
  });

  it("A19 before any usage is reported the input is the history's text characters ÷ 4", () => {
    const history: Message[] = [
      { role: "user", content: [{ type: "text", text: "x".repeat(41) }] },
      { role: "assistant", content: [{ type: "text", text: "y".repeat(40) }] },
    ];
    const conversation = createLiveConversation({
      backend: scriptedBackend([]),
      prices: testPrices,
      restore: {
        conversation: {
          formatVersion: 1,
          items: [],
          feedback: new Map(),
          skillCards: new Map(),
          lintRuleCards: new Map(),
          approvalCards: new Map(),
          resolvedCards: [],
          history,
          queued: [],
          unsent: [],
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
          estimatedCost: { kind: "unknown" },
          sentFacts: [{ message: 0 }],
        },
        images: new Map(),
      },
    });
    expect(conversation.compactionPreview()).toEqual({
      available: false,
      reason: "tooFewTurns",
      inputTokens: 21,
      estimatedCost: { kind: "estimated", dollars: 0.000021 },
    });
  });

  it("A22 compaction is not offered while a turn runs, with two turns or fewer, or on a CLI backend", async () => {
    const hold = gate();
    const backend = scriptedBackend([
      { text: "a" },
      { text: "b" },
      { text: "c", wait: hold.promise },
    ]);
    const conversation = createLiveConversation({
      backend,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("one");
    await conversation.whenIdle();
    conversation.send("two");
    await conversation.whenIdle();
    expect(conversation.compactionPreview()).toMatchObject({
      available: false,
      reason: "tooFewTurns",
    });
    conversation.send("three");
    expect(conversation.compactionPreview()).toMatchObject({
      available: false,
      reason: "turnRunning",
    });
    expect(await conversation.compact()).toMatchObject({ ok: false });
    hold.open();
    await conversation.whenIdle();
    expect(conversation.compactionPreview()).toMatchObject({ available: true });
    conversation.switchBackend({
      kind: "cli",
      provider: "claude-code",
      model: "default",
      runTurn: () => Promise.reject(new Error("not used")),
    });
    expect(conversation.compactionPreview()).toMatchObject({
      available: false,
      reason: "cliBackend",
      estimatedCost: { kind: "notBilled" },
    });
    expect(backend.requests).toHaveLength(3);
  });

  it("A20 one call summarises every turn but the last two; history, sentFacts and panel change as specified", async () => {
    const { backend, conversation, recorder } = await threeTurns(
      [
        { text: "  The user asked for one.  ", usage: { input: 120, output: 30 } },
        { text: "four done" },
      ],
      true,
    );
    const before = conversation.snapshot();
    const result = await conversation.compact();
    expect(result).toEqual({ ok: true, summary: "The user asked for one." });
    const compactRequest = backend.requests[3];
    expect(compactRequest?.history).toEqual([
      ...before.history.slice(0, 2),
      { role: "user", content: [{ type: "text", text: COMPACTION_INSTRUCTION }] },
    ]);
    const after = conversation.snapshot();
    expect(after.history).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "# Conversation so far\nThe user asked for one." }],
      },
      ...before.history.slice(2),
    ]);
    expect(after.sentFacts).toEqual([{ message: 1 }, { message: 3 }]);
    expect(after.items).toEqual([
      ...before.items,
      expect.objectContaining({ type: "notice", kind: "compacted" }),
    ]);
    expect(after.lastRoundUsage).toBeUndefined();
    expect(after.usage.output).toBe(before.usage.output + 30);
    expect(recorder.changes).toEqual(["compaction"]);
    // The next turn sends every section whole again.
    conversation.send("four");
    await conversation.whenIdle();
    expect(conversation.snapshot().history[5]?.content[0]).toEqual({
      type: "text",
      text: "# Document\nPage 1",
    });
  });

  it("A21 a failed call or an empty summary changes nothing and adds a failure item", async () => {
    const { conversation, recorder } = await threeTurns([{ fail: "HTTP 500" }, { text: "   " }]);
    const before = conversation.snapshot();
    expect(await conversation.compact()).toMatchObject({ ok: false });
    expect(await conversation.compact()).toMatchObject({ ok: false });
    const after = conversation.snapshot();
    expect(after.history).toEqual(before.history);
    expect(after.sentFacts).toEqual(before.sentFacts);
    expect(after.items.slice(before.items.length).map((item) => item.type)).toEqual([
      "failure",
      "failure",
    ]);
    expect(recorder.changes).toEqual([]);
  });

  it("A20 a compacted conversation reopens from its package and goes on", async () => {
    const dir = await mkdtemp(join(tmpdir(), "verbatim-compact-"));
    folders.push(dir);
    const pkg = join(dir, "Doc.pkg");
    await mkdir(pkg);
    const backend = scriptedBackend([
      { text: "1" },
      { text: "2" },
      { text: "3" },
      { text: "Summary." },
    ]);
    const first = await openLiveConversation(pkg, {
      backend,
      newId: counterIds("A"),
      prices: testPrices,
    });
    for (const text of ["one", "two", "three"]) {
      first.conversation.send(text);
      await first.conversation.whenIdle();
    }
    await first.conversation.compact();
    await first.save();
    const compacted = first.conversation.snapshot();
    const next = scriptedBackend([{ text: "4" }]);
    const second = await openLiveConversation(pkg, {
      backend: next,
      newId: counterIds("B"),
      prices: testPrices,
    });
    expect(second.conversation.snapshot()).toEqual(compacted);
    second.conversation.send("four");
    await second.conversation.whenIdle();
    expect(next.requests[0]?.history).toEqual([
      ...compacted.history,
      { role: "user", content: [{ type: "text", text: "four" }] },
    ]);
    expect(second.conversation.snapshot().sentFacts).toEqual([
      { message: 1 },
      { message: 3 },
      { message: 5 },
    ]);
  });
});
