import { describe, expect, it } from "vitest";
import { claudeCodeBackend } from "../../packages/library/src/cli-agents/index.js";
import type { CliLogEntry } from "../../packages/library/src/cli-agents/index.js";
import { transcriptText } from "../../packages/library/src/conversation/index.js";
import type { Item } from "../../packages/library/src/format/index.js";
import { fakeCli, isRunning, turnInput } from "./fake-cli.js";

// The fake `claude` (test/fixtures/cli-agents/bin) replays stream lines captured from real
// Claude Code runs; each fixture's first line names its source.
const FIRST = "claude/first-turn.jsonl";
const RESUME = "claude/resume-turn.jsonl";
const SESSION = "427d0154-6f6a-41b4-ac8d-cbc54d3f9486";
const BASE_ARGS = ["-p", "--output-format", "stream-json", "--verbose"];

/** A restored panel whose transcript is longer than 20,000 characters. */
function longTranscript(): string {
  const items: Item[] = [];
  for (let index = 0; index < 120; index++) {
    items.push({ id: `u${index}`, type: "user", text: `question ${index}: ${"why ".repeat(30)}` });
    items.push({
      id: `a${index}`,
      type: "assistant",
      text: `answer ${index}: ${"because ".repeat(20)}`,
    });
  }
  return transcriptText(items);
}

describe("Claude Code backend", () => {
  it("A25 a conversation that was never closed never sends the preamble; later turns --resume the session", async () => {
    const fake = fakeCli([FIRST, RESUME]);
    const backend = claudeCodeBackend({ env: fake.env });
    const first = turnInput("ping-1 please");
    const result = await backend.runTurn(first.input);
    expect(result.failure).toBeUndefined();
    const second = turnInput("and again");
    await backend.runTurn(second.input);
    const calls = fake.calls();
    expect(calls.map((call) => call.args)).toEqual([
      BASE_ARGS,
      [...BASE_ARGS, "--resume", SESSION],
    ]);
    expect(calls.map((call) => call.stdin)).toEqual(["ping-1 please", "and again"]);
    expect(calls.some((call) => call.stdin.includes("# Conversation so far"))).toBe(false);
  });

  it("A25 the first turn after reopening runs without --resume and carries exactly the preamble, cut to the last 20,000 characters", async () => {
    const transcript = longTranscript();
    expect(transcript.length).toBeGreaterThan(20_000);
    const fake = fakeCli([FIRST, RESUME]);
    const backend = claudeCodeBackend({ env: fake.env });
    await backend.runTurn(turnInput("what next?", { restoredTranscript: transcript }).input);
    const [call] = fake.calls();
    expect(call?.args).toEqual(BASE_ARGS);
    const expected = `# Conversation so far\n${transcript.slice(transcript.length - 20_000)}\n\nwhat next?`;
    expect(call?.stdin).toBe(expected);
    // Exactly 20,000 characters of transcript: not one more.
    const body = (call?.stdin ?? "").slice(
      "# Conversation so far\n".length,
      -"\n\nwhat next?".length,
    );
    expect(body.length).toBe(20_000);
    expect(transcript.endsWith(body)).toBe(true);
  });

  it("A25 the second turn after reopening resumes the new session with the usual message", async () => {
    const fake = fakeCli([FIRST, RESUME]);
    const backend = claudeCodeBackend({ env: fake.env });
    await backend.runTurn(
      turnInput("first", { restoredTranscript: "User: hello\n\nAssistant: hi" }).input,
    );
    await backend.runTurn(turnInput("second").input);
    const calls = fake.calls();
    expect(calls[0]?.stdin).toBe("# Conversation so far\nUser: hello\n\nAssistant: hi\n\nfirst");
    expect(calls[1]?.args).toEqual([...BASE_ARGS, "--resume", SESSION]);
    expect(calls[1]?.stdin).toBe("second");
  });

  it("A25 a restored turn drops a session the backend still held (a new process without --resume)", async () => {
    const fake = fakeCli([FIRST]);
    const backend = claudeCodeBackend({ env: fake.env });
    await backend.runTurn(turnInput("before").input);
    expect(backend.sessionId).toBe(SESSION);
    await backend.runTurn(turnInput("after", { restoredTranscript: "User: before" }).input);
    expect(fake.calls()[1]?.args).toEqual(BASE_ARGS);
  });

  it("A25 the preamble is in no history message, no panel item and no log line", async () => {
    const fake = fakeCli(["claude/tool-turn.jsonl"]);
    const log: CliLogEntry[] = [];
    const backend = claudeCodeBackend({ env: fake.env, log: (entry) => log.push(entry) });
    const { input, items } = turnInput("run it", { restoredTranscript: "User: earlier words" });
    const result = await backend.runTurn(input);
    expect(fake.calls()[0]?.stdin).toContain("# Conversation so far");
    const everything = JSON.stringify({ history: result.history, items, log });
    expect(everything).not.toContain("# Conversation so far");
    expect(everything).not.toContain("earlier words");
    expect(log.filter((entry) => entry.kind === "user")).toEqual([
      { kind: "user", text: "run it" },
    ]);
    expect(result.history).toEqual([
      input.userMessage,
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
    ]);
  });

  it("maps text, tool calls and tool results into panel items, and the result line into usage", async () => {
    const fake = fakeCli(["claude/tool-turn.jsonl"]);
    const backend = claudeCodeBackend({ env: fake.env });
    const { input, items } = turnInput("run echo hi");
    const result = await backend.runTurn(input);
    expect(items).toEqual([
      { id: "item-1", type: "assistant", text: "I'll run that command." },
      {
        id: "item-2",
        type: "tool",
        name: "Bash",
        status: "succeeded",
        callID: "toolu_01Kh58Q6tGb44EXufW2gRw1Z",
        summary: "echo hi",
        detail: "hi",
      },
      { id: "item-3", type: "assistant", text: "hi" },
    ]);
    // Claude's input_tokens already exclude cache reads and writes.
    expect(result.usage).toEqual({
      input: 4,
      output: 87,
      cacheRead: 40877,
      cacheWrite: 8685,
      webSearchRequests: 0,
    });
  });

  it("reports cost notBilled on a subscription (no API key) and the CLI's dollars on an API key", async () => {
    const subscription = await claudeCodeBackend({ env: fakeCli([FIRST]).env }).runTurn(
      turnInput("x").input,
    );
    expect(subscription.cost).toEqual({ kind: "notBilled" });
    expect(subscription.usage.reportedCost).toBeUndefined();
    // The init line of this capture says apiKeySource "ANTHROPIC_API_KEY".
    const keyed = await claudeCodeBackend({
      env: fakeCli(["claude/api-key-mcp-tool.jsonl"]).env,
    }).runTurn(turnInput("x").input);
    expect(keyed.cost).toEqual({ kind: "reported", dollars: 0.07691475 });
    expect(keyed.usage.reportedCost).toBe(0.07691475);
    // Without an init field to go by, ANTHROPIC_API_KEY in the environment decides.
    const env = fakeCli([FIRST], { ANTHROPIC_API_KEY: "test-key" }).env;
    const fromEnv = await claudeCodeBackend({ env }).runTurn(turnInput("x").input);
    expect(fromEnv.cost).toEqual({ kind: "reported", dollars: 0.06208425 });
  });

  it("malformed output gives a failure with the CLI's stderr, and the conversation stays usable", async () => {
    const fake = fakeCli([`${FIRST}|garbage|stderr=warning: odd output`, RESUME]);
    const backend = claudeCodeBackend({ env: fake.env });
    const bad = await backend.runTurn(turnInput("one").input);
    expect(bad.failure).toContain(
      "Claude Code wrote a line that is not a JSON event: this is not json {",
    );
    expect(bad.failure).toContain("warning: odd output");
    expect(backend.lastFailure?.code).toBe("cli_agent_malformed_output");
    const good = await backend.runTurn(turnInput("two").input);
    expect(good.failure).toBeUndefined();
    expect(backend.lastFailure).toBeUndefined();
    expect(good.history[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "ping-1" }],
    });
  });

  it("a non-zero exit gives a failure with the exit code and stderr", async () => {
    const fake = fakeCli([`${FIRST}|stderr=API Error: 529 overloaded|exit=1`]);
    const result = await claudeCodeBackend({ env: fake.env }).runTurn(turnInput("x").input);
    expect(result.failure).toContain("Claude Code exited with exit code 1");
    expect(result.failure).toContain("API Error: 529 overloaded");
  });

  it("a missing binary gives a failure that says how to install it, and no history", async () => {
    const fake = fakeCli([FIRST]);
    const backend = claudeCodeBackend({ env: fake.env, command: "claude-not-installed-here" });
    const result = await backend.runTurn(turnInput("x").input);
    expect(result.failure).toContain(
      "Claude Code is not installed: `claude-not-installed-here` was not found on PATH",
    );
    expect(result.history).toEqual([]);
    expect(result.cost).toEqual({ kind: "notBilled" });
    expect(backend.lastFailure?.code).toBe("cli_agent_not_found");
  });

  it("a result line with is_error gives a failure with the CLI's errors", async () => {
    const fake = fakeCli(["claude/unknown-session.jsonl|exit=1"]);
    const result = await claudeCodeBackend({ env: fake.env }).runTurn(turnInput("x").input);
    expect(result.failure).toContain(
      "No conversation found with session ID: 00000000-0000-4000-8000-000000000000",
    );
  });

  it("cancellation ends the whole process tree", async () => {
    const fake = fakeCli([`${FIRST}|hang`]);
    const controller = new AbortController();
    const backend = claudeCodeBackend({ env: fake.env, killGraceMs: 500 });
    let started = (): void => undefined;
    const firstItem = new Promise<void>((resolve) => (started = resolve));
    const { input } = turnInput("long job", { signal: controller.signal, onItem: () => started() });
    const outcome = backend.runTurn(input);
    await firstItem;
    await waitFor(() => fake.children().length === 1);
    const pids = [fake.calls()[0]?.pid ?? 0, ...fake.children()];
    expect(pids.every(isRunning)).toBe(true);
    controller.abort();
    const result = await outcome;
    expect(result.cancelled).toBe(true);
    expect(result.failure).toBeUndefined();
    await waitFor(() => pids.every((pid) => !isRunning(pid)));
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
