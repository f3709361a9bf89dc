import { describe, expect, it } from "vitest";
import { claudeCodeBackend, codexBackend } from "../../packages/library/src/cli-agents/index.js";
import type { CliLogEntry } from "../../packages/library/src/cli-agents/index.js";
import { createLiveConversation } from "../../packages/library/src/conversation/live-conversation.js";
import { emptyConversation } from "../../packages/library/src/format/index.js";
import type { SavedConversation } from "../../packages/library/src/format/index.js";
import { fakeCli } from "./fake-cli.js";

// Live conversations on the CLI backends, the CLIs replaced by the fake executables of
// test/fixtures/cli-agents/bin replaying captured stream lines.

/** A saved conversation of one earlier turn, as the archive would restore it. */
function savedConversation(): SavedConversation {
  return {
    ...emptyConversation(),
    provider: "claude-code",
    model: "default",
    items: [
      { id: "U1", type: "user", text: "Name the colour of the sky." },
      { id: "A1", type: "assistant", text: "Blue, on a clear day." },
    ],
    history: [
      { role: "user", content: [{ type: "text", text: "Name the colour of the sky." }] },
      { role: "assistant", content: [{ type: "text", text: "Blue, on a clear day." }] },
    ],
    sentFacts: [{ message: 0 }],
  };
}

const PREAMBLE_TRANSCRIPT = "User: Name the colour of the sky.\n\nAssistant: Blue, on a clear day.";

describe("CLI backends in a live conversation", () => {
  it("A25 the first turn after reopening carries the preamble to the CLI only; the next turn resumes the new session", async () => {
    const fake = fakeCli(["claude/first-turn.jsonl", "claude/resume-turn.jsonl"]);
    const log: CliLogEntry[] = [];
    const conversation = createLiveConversation({
      backend: claudeCodeBackend({ env: fake.env, log: (entry) => log.push(entry) }),
      restore: { conversation: savedConversation(), images: new Map() },
    });
    conversation.send("And at night?");
    await conversation.whenIdle();
    conversation.send("Thanks.");
    await conversation.whenIdle();

    const [first, second] = fake.calls();
    expect(first?.args).not.toContain("--resume");
    expect(first?.stdin).toBe(`# Conversation so far\n${PREAMBLE_TRANSCRIPT}\n\nAnd at night?`);
    expect(second?.args.slice(-2)).toEqual(["--resume", "427d0154-6f6a-41b4-ac8d-cbc54d3f9486"]);
    expect(second?.stdin).toBe("Thanks.");

    const snapshot = conversation.snapshot();
    expect(JSON.stringify(snapshot.history)).not.toContain("# Conversation so far");
    expect(JSON.stringify(conversation.items)).not.toContain("# Conversation so far");
    expect(JSON.stringify(log)).not.toContain("# Conversation so far");
    expect(log.filter((entry) => entry.kind === "user")).toEqual([
      { kind: "user", text: "And at night?" },
      { kind: "user", text: "Thanks." },
    ]);
    expect(snapshot.history.map((message) => [message.role, message.content[0]])).toEqual([
      ["user", { type: "text", text: "Name the colour of the sky." }],
      ["assistant", { type: "text", text: "Blue, on a clear day." }],
      ["user", { type: "text", text: "And at night?" }],
      ["assistant", { type: "text", text: "ping-1" }],
      ["user", { type: "text", text: "Thanks." }],
      ["assistant", { type: "text", text: "ping-1" }],
    ]);
    expect(snapshot.estimatedCost).toEqual({ kind: "notBilled" });
    expect(snapshot.usage).toEqual({
      input: 4,
      output: 12,
      cacheRead: 16611 + 16136,
      cacheWrite: 8579 + 8605,
      webSearchRequests: 0,
    });
  });

  it("A25 a conversation that was never closed never sends the preamble", async () => {
    const fake = fakeCli(["codex/first-turn.jsonl", "codex/resume-turn.jsonl"]);
    const conversation = createLiveConversation({ backend: codexBackend({ env: fake.env }) });
    for (const text of ["one", "two", "three"]) {
      conversation.send(text);
      await conversation.whenIdle();
    }
    const calls = fake.calls();
    expect(calls.map((call) => call.stdin)).toEqual(["one", "two", "three"]);
    expect(calls.map((call) => call.args.includes("resume"))).toEqual([false, true, true]);
  });

  it("A25 when the first turn after reopening fails before a session starts, the next turn still carries the preamble", async () => {
    const fake = fakeCli(["empty.jsonl|stderr=Not logged in|exit=1", "codex/first-turn.jsonl"]);
    const conversation = createLiveConversation({
      backend: codexBackend({ env: fake.env }),
      restore: { conversation: savedConversation(), images: new Map() },
    });
    conversation.send("And at night?");
    await conversation.whenIdle();
    conversation.send("Again?");
    await conversation.whenIdle();
    const [first, second] = fake.calls();
    expect(first?.stdin).toBe(`# Conversation so far\n${PREAMBLE_TRANSCRIPT}\n\nAnd at night?`);
    expect(second?.args).toEqual(["exec", "--json", "-"]);
    expect(second?.stdin).toBe(`# Conversation so far\n${PREAMBLE_TRANSCRIPT}\n\nAgain?`);
  });

  it("malformed output and a missing binary give a failure item with stderr, and the conversation stays usable", async () => {
    const fake = fakeCli([
      "claude/first-turn.jsonl|garbage|stderr=debug: oops",
      "claude/resume-turn.jsonl",
    ]);
    const conversation = createLiveConversation({ backend: claudeCodeBackend({ env: fake.env }) });
    conversation.send("first");
    await conversation.whenIdle();
    const failures = conversation.items.filter((item) => item.type === "failure");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ type: "failure" });
    expect(failures[0]?.type === "failure" && failures[0].message).toContain("not a JSON event");
    expect(failures[0]?.type === "failure" && failures[0].message).toContain("debug: oops");
    conversation.send("second");
    await conversation.whenIdle();
    expect(conversation.items.at(-1)).toMatchObject({ type: "assistant", text: "ping-1" });

    const missing = createLiveConversation({
      backend: claudeCodeBackend({ env: fake.env, command: "claude-is-not-here" }),
    });
    missing.send("hello");
    await missing.whenIdle();
    expect(missing.running).toBe(false);
    expect(missing.items.at(-1)).toMatchObject({ type: "failure" });
    expect(JSON.stringify(missing.items.at(-1))).toContain("Claude Code is not installed");
  });

  it("A22 compaction is not offered on a CLI backend", async () => {
    const fake = fakeCli(["claude/first-turn.jsonl"]);
    const conversation = createLiveConversation({
      backend: claudeCodeBackend({ env: fake.env }),
      restore: { conversation: savedConversation(), images: new Map() },
    });
    for (const text of ["two", "three", "four"]) {
      conversation.send(text);
      await conversation.whenIdle();
    }
    const preview = conversation.compactionPreview();
    expect(preview.available).toBe(false);
    expect(preview.reason).toBe("cliBackend");
  });

  it("cancelling a turn ends the CLI's process tree and keeps the conversation usable", async () => {
    const fake = fakeCli(["claude/first-turn.jsonl|hang", "claude/resume-turn.jsonl"]);
    const conversation = createLiveConversation({
      backend: claudeCodeBackend({ env: fake.env, killGraceMs: 500 }),
    });
    conversation.send("long");
    const start = Date.now();
    while (fake.children().length === 0 && Date.now() - start < 5000)
      await new Promise((r) => setTimeout(r, 20));
    conversation.cancel();
    await conversation.whenIdle();
    conversation.send("short");
    await conversation.whenIdle();
    expect(fake.calls()[1]?.args.slice(-2)).toEqual([
      "--resume",
      "427d0154-6f6a-41b4-ac8d-cbc54d3f9486",
    ]);
    expect(conversation.items.at(-1)).toMatchObject({ type: "assistant", text: "ping-1" });
  });
});
