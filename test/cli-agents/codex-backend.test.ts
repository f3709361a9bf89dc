import { describe, expect, it } from "vitest";
import { codexBackend } from "../../packages/library/src/cli-agents/index.js";
import type { CliLogEntry } from "../../packages/library/src/cli-agents/index.js";
import { fakeCli, isRunning, turnInput } from "./fake-cli.js";

// The fake `codex` (test/fixtures/cli-agents/bin) replays stream lines captured from real
// `codex exec --json` runs; each fixture's first line names its source.
const FIRST = "codex/first-turn.jsonl";
const RESUME = "codex/resume-turn.jsonl";
const THREAD = "01a00027-7403-77a0-ae9f-a204516411ed";

describe("Codex backend", () => {
  it("A25 a conversation that was never closed never sends the preamble; later turns use `codex exec resume <thread id>`", async () => {
    const fake = fakeCli([FIRST, RESUME]);
    const backend = codexBackend({ env: fake.env });
    await backend.runTurn(turnInput("ping-1 please").input);
    await backend.runTurn(turnInput("and again").input);
    const calls = fake.calls();
    expect(calls.map((call) => call.args)).toEqual([
      ["exec", "--json", "-"],
      ["exec", "--json", "resume", THREAD, "-"],
    ]);
    expect(calls.map((call) => call.stdin)).toEqual(["ping-1 please", "and again"]);
  });

  it("A25 the first turn after reopening starts a new thread with exactly the preamble; the second resumes that thread", async () => {
    const transcript = "x".repeat(5_000) + "y".repeat(20_000);
    const fake = fakeCli([FIRST, RESUME]);
    const log: CliLogEntry[] = [];
    const backend = codexBackend({
      env: fake.env,
      model: "gpt-5-codex",
      log: (entry) => log.push(entry),
    });
    const { input, items } = turnInput("continue", { restoredTranscript: transcript });
    const result = await backend.runTurn(input);
    await backend.runTurn(turnInput("then this").input);
    const [first, second] = fake.calls();
    expect(first?.args).toEqual(["exec", "--json", "--model", "gpt-5-codex", "-"]);
    expect(first?.stdin).toBe(`# Conversation so far\n${"y".repeat(20_000)}\n\ncontinue`);
    expect(second?.args).toEqual([
      "exec",
      "--json",
      "--model",
      "gpt-5-codex",
      "resume",
      THREAD,
      "-",
    ]);
    expect(second?.stdin).toBe("then this");
    const everything = JSON.stringify({ history: result.history, items, log });
    expect(everything).not.toContain("# Conversation so far");
    expect(everything).not.toContain("yyyy");
    expect(log.filter((entry) => entry.kind === "user").map((entry) => entry)).toEqual([
      { kind: "user", text: "continue" },
      { kind: "user", text: "then this" },
    ]);
  });

  it("maps Codex usage: input_tokens includes cached_input_tokens, which are subtracted", async () => {
    const result = await codexBackend({ env: fakeCli([FIRST]).env }).runTurn(turnInput("x").input);
    expect(result.usage).toEqual({
      input: 14999 - 11008,
      output: 7,
      cacheRead: 11008,
      cacheWrite: 0,
      webSearchRequests: 0,
    });
    expect(result.history[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "ping-1" }],
    });
  });

  it("reports cost notBilled on a ChatGPT sign-in and unknown on CODEX_API_KEY (Codex reports no dollars)", async () => {
    const signedIn = await codexBackend({ env: fakeCli([FIRST]).env }).runTurn(
      turnInput("x").input,
    );
    expect(signedIn.cost).toEqual({ kind: "notBilled" });
    const keyed = await codexBackend({
      env: fakeCli([FIRST], { CODEX_API_KEY: "test-key" }).env,
    }).runTurn(turnInput("x").input);
    expect(keyed.cost).toEqual({ kind: "unknown" });
    const forced = await codexBackend({ env: fakeCli([FIRST]).env, billing: "apiKey" }).runTurn(
      turnInput("x").input,
    );
    expect(forced.cost).toEqual({ kind: "unknown" });
  });

  it("maps commands, reasoning and the final message into panel items; history gets only the final text", async () => {
    const { input, items } = turnInput("find the readme");
    const result = await codexBackend({
      env: fakeCli(["codex/exec-doc-sample.jsonl"]).env,
    }).runTurn(input);
    expect(
      items.map((item) => [
        item.type,
        "text" in item ? item.text : "name" in item ? item.name : "",
      ]),
    ).toEqual([
      ["thinking", "**Searching for README files**"],
      ["tool", "command"],
      ["thinking", "**Checking repository root for README**"],
      ["assistant", "Yep — there’s a `README.md` in the repository root."],
    ]);
    expect(items[1]).toMatchObject({
      status: "succeeded",
      summary: "bash -lc ls",
      statusText: "exit code 0",
    });
    expect(result.history).toEqual([
      input.userMessage,
      {
        role: "assistant",
        content: [{ type: "text", text: "Yep — there’s a `README.md` in the repository root." }],
      },
    ]);
  });

  it("turn.failed gives one failure (the fatal error event is not repeated)", async () => {
    const fake = fakeCli(["codex/failed-turn.jsonl|exit=1"]);
    const { input, items } = turnInput("x");
    const result = await codexBackend({ env: fake.env }).runTurn(input);
    expect(result.failure?.match(/Command execution failed/g)).toHaveLength(1);
    expect(items.some((item) => item.type === "failure")).toBe(false);
    expect(items[0]).toMatchObject({ type: "tool", status: "failed", statusText: "exit code 127" });
  });

  it("a run that ends before the turn completes gives a failure", async () => {
    const result = await codexBackend({
      env: fakeCli(["codex/interrupted-turn.jsonl"]).env,
    }).runTurn(turnInput("x").input);
    expect(result.failure).toBe("Codex ended without finishing the turn");
  });

  it("malformed output and a missing binary give failures, and the backend stays usable", async () => {
    const fake = fakeCli([`${FIRST}|garbage`, RESUME]);
    const backend = codexBackend({ env: fake.env });
    const bad = await backend.runTurn(turnInput("one").input);
    expect(bad.failure).toContain("Codex wrote a line that is not a JSON event");
    const good = await backend.runTurn(turnInput("two").input);
    expect(good.failure).toBeUndefined();
    const missing = await codexBackend({ env: fake.env, command: "/nonexistent/codex" }).runTurn(
      turnInput("x").input,
    );
    expect(missing.failure).toContain("Codex is not installed");
    expect(missing.history).toEqual([]);
  });

  it("a command still running when the turn is cancelled is shown as cancelled", async () => {
    // The first four lines of the docs' sample: the command has started, not finished.
    const fake = fakeCli(["codex/exec-doc-sample.jsonl|lines=4|hang"]);
    const controller = new AbortController();
    const { input, items } = turnInput("x", {
      signal: controller.signal,
      onItem: (item) => {
        if (item.type === "tool") controller.abort();
      },
    });
    const result = await codexBackend({ env: fake.env, killGraceMs: 500 }).runTurn(input);
    expect(result.cancelled).toBe(true);
    expect(items.find((item) => item.type === "tool")).toMatchObject({
      name: "command",
      status: "cancelled",
      summary: "bash -lc ls",
      statusText: "ended without a result",
    });
  });

  it("cancellation ends the whole process tree", async () => {
    const fake = fakeCli([`${FIRST}|hang`]);
    const controller = new AbortController();
    let started = (): void => undefined;
    const firstItem = new Promise<void>((resolve) => (started = resolve));
    const { input } = turnInput("long job", { signal: controller.signal, onItem: () => started() });
    const outcome = codexBackend({ env: fake.env, killGraceMs: 500 }).runTurn(input);
    await firstItem;
    const start = Date.now();
    while (fake.children().length === 0 && Date.now() - start < 5000) await sleep(20);
    const pids = [fake.calls()[0]?.pid ?? 0, ...fake.children()];
    expect(pids.length).toBe(2);
    expect(pids.every(isRunning)).toBe(true);
    controller.abort();
    const result = await outcome;
    expect(result.cancelled).toBe(true);
    while (pids.some(isRunning) && Date.now() - start < 10_000) await sleep(20);
    expect(pids.some(isRunning)).toBe(false);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
