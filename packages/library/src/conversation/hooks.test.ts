import { mkdtemp, mkdir, readFile, rm, writeFile, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CliBackend, CliTurnInput } from "./backend.js";
import { createLiveConversation } from "./live-conversation.js";
import { openLiveConversation } from "./open.js";
import { transcriptText } from "./transcript.js";
import { gate, scriptedBackend } from "../../../../test/support/scripted-backend.js";
import {
  changeRecorder,
  counterIds,
  testPrices,
} from "../../../../test/support/conversation-fixtures.js";

const folders: string[] = [];
async function packageFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "verbatim-hooks-"));
  folders.push(dir);
  const pkg = join(dir, "Doc.pkg");
  await mkdir(pkg);
  return pkg;
}
afterEach(async () => {
  for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A run through every kind of change, in order. */
async function everyChange(
  conversation: ReturnType<typeof createLiveConversation>,
  open: () => void,
) {
  conversation.send("one");
  const queued = conversation.send("two");
  const third = conversation.send("three");
  if (queued.status !== "queued" || third.status !== "queued") throw new Error("expected queued");
  conversation.returnToInput(third.message.id);
  open();
  await conversation.whenIdle();
  const item = conversation.items.at(-1);
  conversation.rate(item?.id ?? "", { rating: "bad", reasons: ["wrong"] });
  conversation.resolveCard(item?.id ?? "");
  await conversation.compact();
  conversation.requestNewConversation().confirm();
}

describe("the change hook (A5, A17)", () => {
  it("A5 exactly turn end, rating, card state, queued, returned, new conversation and compaction fire the hook; restoring does not", async () => {
    const pkg = await packageFolder();
    const hold = gate();
    const marks: string[] = [];
    const first = await openLiveConversation(pkg, {
      backend: scriptedBackend([{ text: "1", wait: hold.promise }, { text: "2" }]),
      newId: counterIds("A"),
      prices: testPrices,
      onChangedWithoutUndo: () => marks.push("edited"),
    });
    first.conversation.send("one");
    first.conversation.send("two");
    hold.open();
    await first.conversation.whenIdle();
    expect(marks).toEqual(["edited", "edited", "edited"]);
    await first.save();

    const reopenedMarks: string[] = [];
    const recorder = changeRecorder();
    const hold2 = gate();
    const second = await openLiveConversation(pkg, {
      backend: scriptedBackend([
        { text: "3", wait: hold2.promise },
        { text: "4" },
        { text: "5" },
        { text: "summary" },
      ]),
      newId: counterIds("B"),
      prices: testPrices,
      onChange: recorder.onChange,
      onChangedWithoutUndo: () => reopenedMarks.push("edited"),
    });
    expect(reopenedMarks).toEqual([]);
    expect(second.conversation.snapshot().history).toHaveLength(4);
    await everyChange(second.conversation, hold2.open);
    expect(recorder.changes).toEqual([
      "queued",
      "queued",
      "returned",
      "turnEnd",
      "turnEnd",
      "rating",
      "cardState",
      "compaction",
      "newConversation",
    ]);
    expect(reopenedMarks).toHaveLength(recorder.changes.length);
  });

  it("A17 with the keep-conversation setting off no change marks the document edited", async () => {
    const pkg = await packageFolder();
    const hold = gate();
    const marks: string[] = [];
    const recorder = changeRecorder();
    const opened = await openLiveConversation(pkg, {
      backend: scriptedBackend([{ text: "3", wait: hold.promise }, { text: "4" }, { text: "5" }]),
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
      archive: { settings: () => ({ keepConversation: false }) },
      onChangedWithoutUndo: () => marks.push("edited"),
    });
    await everyChange(opened.conversation, hold.open);
    expect(marks).toEqual([]);
    expect(recorder.changes).toEqual([]);
  });
});

describe("new conversation (A14)", () => {
  it("A14 an unreadable saved conversation is kept until a new conversation is confirmed, then deleted", async () => {
    const pkg = await packageFolder();
    await mkdir(join(pkg, "agent"));
    await writeFile(join(pkg, "agent", "conversation.json"), '{"formatVersion": 7}');
    const opened = await openLiveConversation(pkg, {
      backend: scriptedBackend([]),
      newId: counterIds(),
      prices: testPrices,
    });
    expect(opened.conversation.items).toEqual([
      expect.objectContaining({ type: "notice", kind: "unreadableConversation" }),
    ]);
    expect(opened.conversation.snapshot().items).toEqual([]);
    await opened.save();
    expect(await readFile(join(pkg, "agent", "conversation.json"), "utf8")).toBe(
      '{"formatVersion": 7}',
    );
    const request = opened.conversation.requestNewConversation();
    expect(request.needsConfirmation).toBe(true);
    await opened.save();
    expect(await readdir(pkg)).toContain("agent");
    request.confirm();
    expect(opened.conversation.items).toEqual([]);
    await opened.save();
    expect(await readdir(pkg)).not.toContain("agent");
  });

  it("A14 an empty conversation needs no confirmation; confirming cancels a running turn", async () => {
    const hold = gate();
    const recorder = changeRecorder();
    const conversation = createLiveConversation({
      backend: scriptedBackend([{ text: "late", wait: hold.promise }]),
      newId: counterIds(),
      prices: testPrices,
      onChange: recorder.onChange,
    });
    expect(conversation.requestNewConversation().needsConfirmation).toBe(false);
    conversation.send("one");
    const request = conversation.requestNewConversation();
    expect(request.needsConfirmation).toBe(true);
    request.confirm();
    hold.open();
    await conversation.whenIdle();
    expect(conversation.snapshot().history).toEqual([]);
    expect(conversation.items).toEqual([]);
    expect(recorder.changes).toEqual(["newConversation"]);
  });
});

describe("switching provider or model (A24)", () => {
  it("A24 a switch applies from the next turn, sends the same messages, and is recorded at that turn's end", async () => {
    const hold = gate();
    const a = scriptedBackend([{ text: "from A", wait: hold.promise }], "anthropic", "model-a");
    const b = scriptedBackend([{ text: "from B" }], "openai-chat", "model-b");
    const conversation = createLiveConversation({
      backend: a,
      newId: counterIds(),
      prices: testPrices,
    });
    conversation.send("one");
    conversation.switchBackend(b);
    hold.open();
    await conversation.whenIdle();
    expect(conversation.snapshot()).toMatchObject({ provider: "anthropic", model: "model-a" });
    const before = conversation.snapshot().history;
    conversation.send("two");
    await conversation.whenIdle();
    expect(b.requests[0]?.history).toEqual([
      ...before,
      { role: "user", content: [{ type: "text", text: "two" }] },
    ]);
    expect(conversation.snapshot()).toMatchObject({ provider: "openai-chat", model: "model-b" });
  });
});

function recordingCli(): CliBackend & { inputs: CliTurnInput[] } {
  const inputs: CliTurnInput[] = [];
  return {
    kind: "cli",
    provider: "claude-code",
    model: "default",
    inputs,
    async runTurn(input) {
      inputs.push(input);
      const id = input.newItemId();
      input.onItem({ id, type: "assistant", text: "…" });
      input.onItem({ id, type: "assistant", text: `answer to ${input.message}` });
      return {
        history: [
          input.userMessage,
          { role: "assistant", content: [{ type: "text", text: `answer to ${input.message}` }] },
        ],
        usage: { input: 5, output: 6, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
        cost: { kind: "notBilled" },
      };
    },
  };
}

describe("CLI backends (A25)", () => {
  it("A25 the first CLI turn after reopening gets the restored transcript; later turns and fresh conversations do not", async () => {
    const pkg = await packageFolder();
    const fresh = recordingCli();
    const first = await openLiveConversation(pkg, {
      backend: fresh,
      newId: counterIds("A"),
      prices: testPrices,
    });
    first.conversation.send("one");
    await first.conversation.whenIdle();
    first.conversation.send("two");
    await first.conversation.whenIdle();
    expect(fresh.inputs.map((input) => input.restoredTranscript)).toEqual([undefined, undefined]);
    await first.save();
    const restoredItems = first.conversation.snapshot().items;

    const cli = recordingCli();
    const second = await openLiveConversation(pkg, {
      backend: cli,
      newId: counterIds("B"),
      prices: testPrices,
    });
    second.conversation.send("three");
    await second.conversation.whenIdle();
    second.conversation.send("four");
    await second.conversation.whenIdle();
    expect(cli.inputs[0]?.restoredTranscript).toBe(transcriptText(restoredItems));
    expect(cli.inputs[0]?.message).toBe("three");
    expect(cli.inputs[1]?.restoredTranscript).toBeUndefined();
    const saved = second.conversation.snapshot();
    expect(saved.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.stringify(saved.history)).not.toContain("# Conversation so far");
    expect(saved.items.filter((item) => item.type === "assistant")).toHaveLength(4);
    expect(saved.estimatedCost).toEqual({ kind: "notBilled" });
    expect(saved.usage.output).toBe(24);
    expect(saved).toMatchObject({ provider: "claude-code", model: "default" });
  });

  it("A25 a new CLI session after reopening gets every context section again", async () => {
    const pkg = await packageFolder();
    const sections = () => [{ name: "Document", content: "Page 1" }];
    const first = await openLiveConversation(pkg, {
      backend: recordingCli(),
      sections,
      newId: counterIds("A"),
      prices: testPrices,
    });
    first.conversation.send("one");
    await first.conversation.whenIdle();
    await first.save();
    const cli = recordingCli();
    const second = await openLiveConversation(pkg, {
      backend: cli,
      sections,
      newId: counterIds("B"),
      prices: testPrices,
    });
    second.conversation.send("two");
    await second.conversation.whenIdle();
    second.conversation.send("three");
    await second.conversation.whenIdle();
    expect(cli.inputs.map((input) => input.message)).toEqual([
      "# Document\nPage 1\n\ntwo",
      "three",
    ]);
  });

  it("A25 transcriptText renders each panel item as one plain-text paragraph", () => {
    expect(
      transcriptText([
        { id: "1", type: "user", text: "Make a card", hasImage: true },
        {
          id: "2",
          type: "tool",
          name: "batch_design",
          status: "succeeded",
          summary: "Card",
          statusText: "1 created",
        },
        { id: "3", type: "assistant", text: "Made a card." },
        { id: "4", type: "questions", questions: [{ text: "Colour?", answer: "Red" }] },
      ]),
    ).toBe(
      "User (with image): Make a card\n\nTool batch_design succeeded: Card — 1 created\n\nAssistant: Made a card.\n\nQuestions:\n- Colour? → Red",
    );
  });
});
