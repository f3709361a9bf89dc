/**
 * Runs the terminal agent as a real child process, twice, against the local Anthropic Messages
 * server of the tests (test/support/provider-servers; its stream layout follows the captured
 * body test/fixtures/providers/anthropic/tool-stream.sse).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLocalProvider } from "../../test/support/provider-servers/index.js";

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
      {
        env: { ...process.env, ...env },
      },
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

describe("examples/terminal-agent", () => {
  it("A10a answers with its tools, saves after every turn and resumes from the package", async () => {
    const dir = await mkdtemp(join(tmpdir(), "verbatim-terminal-agent-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "notes.txt"), "buy milk");
    const local = await startLocalProvider("anthropic");
    cleanups.push(() => local.close());
    const env = {
      VERBATIM_PROVIDER: "anthropic",
      VERBATIM_MODEL: "claude-sonnet-4-5",
      ANTHROPIC_BASE_URL: local.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-local",
    };
    const args = ["--package", join(dir, "Session.pkg"), "--root", dir];
    local.script.push(
      {
        text: "Reading.",
        toolCalls: [{ id: "toolu_1", name: "read_file", arguments: '{"path":"notes.txt"}' }],
      },
      { text: "The notes say: buy milk." },
    );
    const first = await runAgent(args, "What do my notes say?\n", env);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("agent> The notes say: buy milk.");
    expect(first.stdout).toContain("[read_file succeeded notes.txt]");
    expect(local.requests[1]?.body.toString("utf8")).toContain('"content":"buy milk"');
    const saved = await readFile(join(dir, "Session.pkg", "agent", "conversation.json"), "utf8");
    expect(saved).toContain("The notes say: buy milk.");

    local.script.push(
      {
        toolCalls: [
          {
            id: "toolu_2",
            name: "write_file",
            arguments: '{"path":"out/todo.txt","content":"milk"}',
          },
        ],
      },
      { text: "Written." },
    );
    const second = await runAgent(args, "Write it down\ny\n", env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("you> What do my notes say?");
    expect(second.stdout).toContain("[approval needed: write out/todo.txt (4 characters)]");
    expect(second.stdout).toContain("agent> Written.");
    expect(await readFile(join(dir, "out", "todo.txt"), "utf8")).toBe("milk");
    // The resumed conversation's request starts with everything the first run sent.
    const resumed = local.requests[2]?.body.toString("utf8") ?? "";
    expect(resumed).toContain("What do my notes say?");
    expect(resumed).toContain("The notes say: buy milk.");
  }, 60_000);
});
