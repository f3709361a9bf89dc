/**
 * Runs the terminal agent as a real child process with `--backend claude-code` and
 * `--backend codex`, twice (the second run resumes from the package), against the fake `claude`
 * and `codex` of test/fixtures/cli-agents/bin put first on PATH: they record their arguments and
 * standard input and replay stream lines captured from the real CLIs (each fixture names its
 * source on its first line).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeCli } from "../../test/cli-agents/fake-cli.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function runAgent(
  args: string[],
  input: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["bin/run-ts.js", "examples/terminal-agent/agent.ts", ...args],
      { env },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const cases = [
  {
    backend: "claude-code",
    plan: ["claude/first-turn.jsonl", "claude/resume-turn.jsonl"],
    resumes: (args: readonly string[]) => args.includes("--resume"),
  },
  {
    backend: "codex",
    plan: ["codex/first-turn.jsonl", "codex/resume-turn.jsonl"],
    resumes: (args: readonly string[]) => args.includes("resume"),
  },
] as const;

describe("examples/terminal-agent on CLI backends", () => {
  for (const { backend, plan, resumes } of cases) {
    it(`A25 A22 --backend ${backend}: resumes its session while open, sends the preamble once after reopening`, async () => {
      const dir = await mkdtemp(join(tmpdir(), "verbatim-terminal-cli-"));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const fake = fakeCli(plan);
      const args = ["--package", join(dir, "Session.pkg"), "--root", dir, "--backend", backend];

      const first = await runAgent(args, "Say ping\nSay it again\n/compact\n", fake.env);
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      expect(first.stdout).toContain("agent> ping-1");
      // A22: the CLI keeps its own context.
      expect(first.stdout).toContain('"available":false,"reason":"cliBackend"');

      const second = await runAgent(args, "After reopening\nOnce more\n", fake.env);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain("you> Say ping");

      const calls = fake.calls();
      expect(calls.map((call) => resumes(call.args))).toEqual([false, true, false, true]);
      const stdin = calls.map((call) => call.stdin);
      expect(stdin.map((text) => text.startsWith("# Conversation so far\n"))).toEqual([
        false,
        false,
        true,
        false,
      ]);
      expect(stdin[0]).toContain("Say ping");
      expect(stdin[2]).toContain("User: Say ping");
      expect(stdin[2]).toContain("Assistant: ping-1");
      expect(stdin[2]?.endsWith("After reopening")).toBe(true);
      expect(stdin[3]?.endsWith("Once more")).toBe(true);

      const saved = await readFile(join(dir, "Session.pkg", "agent", "conversation.json"), "utf8");
      expect(saved).not.toContain("# Conversation so far");
      const conversation = JSON.parse(saved) as { provider?: string; estimatedCost: unknown };
      expect(conversation.provider).toBe(backend);
      expect(conversation.estimatedCost).toEqual({ kind: "notBilled" });
    }, 60_000);
  }
});
