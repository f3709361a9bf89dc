/**
 * Issue 18 with the real Claude Code CLI (`@anthropic-ai/claude-code`, a native binary; its
 * licence is Anthropic's commercial terms, not open source, so it is not a dependency of this
 * project): ANTHROPIC_BASE_URL at the server, a local stub model behind it. A `claude -p` text
 * turn, a tool turn (`--allowedTools "Bash(echo:*)"`) and a further `--resume` of the session
 * all land in one chain; the bytes the stub received are the bytes Claude Code sent (as the
 * server recorded them); the cache report says kept or names the break.
 *
 * The binary: VERBATIM_CLAUDE_CODE_BIN, else node_modules/@anthropic-ai/claude-code-linux-x64/
 * claude or node_modules/.bin/claude. Install it for a run with
 * `npm install --no-save @anthropic-ai/claude-code@2.1.332` (.ci/run installs it outside the
 * project and sets VERBATIM_CLAUDE_CODE_BIN). Without it the test is skipped
 * with a notice. Outside traffic is refused: HTTPS_PROXY points at a closed port.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { freshDatabase, type FreshDatabase, uniqueName } from "../support/databases.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";
import { TEST_OPERATOR_TOKEN, testServer, type TestServer } from "../support/server.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";

const root = new URL("../../", import.meta.url).pathname;
const candidates = [
  process.env["VERBATIM_CLAUDE_CODE_BIN"],
  join(root, "node_modules/@anthropic-ai/claude-code-linux-x64/claude"),
  join(root, "node_modules/.bin/claude"),
].filter((path): path is string => path !== undefined && path !== "");
const claudeBin = candidates.find((path) => existsSync(path));
if (claudeBin === undefined) {
  process.stderr.write(
    "\n[notice] Claude Code is not installed: test/clients/claude-code.test.ts is SKIPPED. " +
      "Set VERBATIM_CLAUDE_CODE_BIN or run npm install --no-save @anthropic-ai/claude-code@2.1.332.\n\n",
  );
}

interface ClaudeResult {
  readonly session_id: string;
  readonly result: string;
  readonly is_error?: boolean;
}

describe.skipIf(claudeBin === undefined)("Claude Code through the gateway", () => {
  let fresh: FreshDatabase;
  let upstream: RawUpstream;
  let server: TestServer;
  let baseUrl: string;
  let key: string;
  let home: string;
  let subject: string;

  beforeAll(async () => {
    fresh = await freshDatabase("sqlite");
    upstream = await startRawUpstream();
    server = await testServer(fresh.database, {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-upstream-key",
        ANTHROPIC_BASE_URL: upstream.url,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    baseUrl = `http://127.0.0.1:${port}`;
    subject = uniqueName("claude");
    key = (await server.apiKeyFor(subject)).key;
    home = mkdtempSync(join(tmpdir(), "verbatim-claude-home-"));
  });
  afterAll(async () => {
    await server?.app.close();
    await upstream?.close();
    await fresh?.cleanup();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  function claude(args: readonly string[]): Promise<ClaudeResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(claudeBin as string, ["-p", ...args, "--output-format", "json"], {
        cwd: home,
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          HOME: home,
          ANTHROPIC_BASE_URL: baseUrl,
          ANTHROPIC_API_KEY: key,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          HTTPS_PROXY: "http://127.0.0.1:9",
          HTTP_PROXY: "http://127.0.0.1:9",
          NO_PROXY: "127.0.0.1,localhost",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
      const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        try {
          const line = out.trim().split("\n").at(-1) ?? "";
          const parsed = JSON.parse(line) as ClaudeResult;
          if (code !== 0 || parsed.is_error === true) {
            reject(new Error(`claude exited ${code}: ${out}\n${err}`));
          } else resolve(parsed);
        } catch {
          reject(new Error(`claude exited ${code} without a JSON result: ${out}\n${err}`));
        }
      });
    });
  }

  it("a text turn, a tool turn and a resume are one chain, byte for byte, with a cache report", async () => {
    const first = await claude(["hi"]);
    expect(first.result).toBe("stub answer");
    upstream.bashCommand = "echo hello-from-tool";
    const tool = await claude([
      "say hello with echo",
      "--resume",
      first.session_id,
      "--allowedTools",
      "Bash(echo:*)",
    ]);
    expect(tool.result).toBe("stub answer");
    upstream.bashCommand = undefined;
    await claude(["and again", "--resume", first.session_id]);

    await callsPlaced(fresh.database, subject);
    const calls = await recordedCallRows(fresh.database, subject);
    const modelCalls = upstream.exchanges.filter((exchange) =>
      exchange.path.startsWith("/v1/messages?"),
    );
    // text turn: 1 call; tool turn: the tool call and the answer after it; resume: 1.
    expect(calls.length).toBe(4);
    expect(modelCalls.length).toBe(calls.length);
    expect(new Set(calls.map((call) => call.conversation_id)).size).toBe(1);
    for (const [index, call] of calls.entries()) {
      expect(call.path).toBe("/v1/messages?beta=true");
      // The stub received exactly what Claude Code sent to the server.
      expect(modelCalls[index]?.body.toString("utf8")).toBe(call.requestText);
      expect(modelCalls[index]?.headers["anthropic-beta"]).toBe(
        (JSON.parse(call.request_headers) as Record<string, string>)["anthropic-beta"],
      );
      if (index > 0) expect(call.matched_count).toBeGreaterThan(0);
    }
    const ids = new Set(calls.map((call) => call.id));
    for (const call of calls.slice(1)) expect(ids.has(call.previous_call_id ?? "")).toBe(true);

    const response = await fetch(
      `${baseUrl}/ai-gateway/conversations/${calls[0]?.conversation_id}/cache`,
      { headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` } },
    );
    const report = (await response.json()) as {
      calls: { cache: string; difference: { path: string } | null }[];
    };
    expect(report.calls[0]?.cache).toBe("first");
    for (const call of report.calls.slice(1)) {
      expect(["kept", "broken"]).toContain(call.cache);
      if (call.cache === "broken") expect(call.difference?.path).toMatch(/^\$/);
    }
    process.stdout.write(
      `[claude-code] cache per call: ${report.calls
        .map((call) =>
          call.difference === null ? call.cache : `${call.cache} at ${call.difference.path}`,
        )
        .join(", ")}\n`,
    );
  }, 300_000);
});
