/**
 * The real Codex CLI (`@openai/codex`, its native binary from the npm package) against the
 * server (issue 17, "Tests with the real clients"): `codex exec --json` with a model_providers
 * entry whose base_url is the server, wire_api "responses". The upstream is a local Anthropic
 * stub (test/support/anthropic-upstream.ts). A text turn completes; a turn with a shell tool
 * call runs the command, sends its output back, completes, and both model calls are stored as
 * one chain. No request leaves the machine: Codex's outside calls are switched off
 * (features.plugins, analytics) and any proxy use goes to a closed local port.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

const CODEX = join(process.cwd(), "node_modules", ".bin", "codex");
const TOOL_MARKER = "hello-from-tool";

interface CodexRun {
  readonly code: number | null;
  readonly events: readonly Record<string, unknown>[];
  readonly stderr: string;
}

/** Runs `codex exec --json` once, with its own empty CODEX_HOME and HOME. */
async function runCodex(baseUrl: string, key: string, prompt: string): Promise<CodexRun> {
  const home = await mkdtemp(join(tmpdir(), "verbatim-codex-"));
  try {
    const provider = `{name="verbatim",base_url="${baseUrl}",wire_api="responses",env_key="VERBATIM_KEY",request_max_retries=0,stream_max_retries=0}`;
    const child = spawn(
      CODEX,
      [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-c",
        "model=stub-model",
        "-c",
        "model_provider=verbatim",
        "-c",
        `model_providers.verbatim=${provider}`,
        "-c",
        "features.plugins=false",
        "-c",
        "analytics.enabled=false",
        "-c",
        "check_for_update_on_startup=false",
        // The stub upstream (Anthropic) runs no hosted tools: the server refuses web_search
        // with a 400 naming this setting (docs/server/responses.md).
        "-c",
        'web_search="disabled"',
        prompt,
      ],
      {
        cwd: home,
        // stdin is /dev/null: `exec` reads additional input from an open stdin.
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          HOME: home,
          CODEX_HOME: home,
          VERBATIM_KEY: key,
          HTTPS_PROXY: "http://127.0.0.1:9",
          HTTP_PROXY: "http://127.0.0.1:9",
          NO_PROXY: "127.0.0.1,localhost",
        },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("close", resolve);
      child.on("error", (error) =>
        reject(
          new Error(
            `cannot run the Codex CLI at ${CODEX} (${error.message}): it is the dev dependency @openai/codex; run npm install`,
          ),
        ),
      );
    });
    clearTimeout(timer);
    const events = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { code, events, stderr };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

function lastMessageHasToolResult(body: Record<string, unknown>): string | undefined {
  const messages = body["messages"] as { role: string; content: unknown }[];
  const last = messages[messages.length - 1];
  if (last === undefined || !Array.isArray(last.content)) return undefined;
  const result = (last.content as { type: string; content?: unknown }[]).find(
    (block) => block.type === "tool_result",
  );
  return result === undefined ? undefined : JSON.stringify(result.content);
}

describeEachDialect("the real Codex CLI against the server", (getDatabase) => {
  let upstream: AnthropicUpstream;
  let server: TestServer;
  let baseUrl: string;

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    // Asked for the tool, the stub calls exec_command; given its result, it answers in text.
    upstream.reply = (body) => {
      const result = lastMessageHasToolResult(body);
      if (result !== undefined) return { text: `The tool said: ${result.slice(0, 200)}` };
      if (JSON.stringify(body["messages"]).includes("please run echo")) {
        return {
          toolCalls: [
            { id: "toolu_codex_1", name: "exec_command", input: { cmd: `echo ${TOOL_MARKER}` } },
          ],
          stopReason: "tool_use",
        };
      }
      return { text: "Hello from the stub." };
    };
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
        VERBATIM_MODEL_PROVIDERS: "stub-model=anthropic",
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    baseUrl = `http://127.0.0.1:${port}/v1`;
  });
  afterAll(async () => {
    await server.app.close();
    await upstream.close();
  });

  async function storedFor(subject: string) {
    const rows = await sql<{
      id: string;
      conversation_id: string;
      previous_message_id: string | null;
      role: string;
      status: string;
      content: string;
    }>`select id, conversation_id, previous_message_id, role, status, content
      from ai_gateway_messages where subject_uid = ${subject}
      order by created_at, depth`.execute(getDatabase().db);
    return rows.rows;
  }

  it("a text turn completes and is stored", { timeout: 120_000 }, async () => {
    const subject = uniqueName("codex");
    const { key } = await server.apiKeyFor(subject);
    const run = await runCodex(baseUrl, key, "hi");
    const types = run.events.map((event) => event["type"]);
    expect(types, run.stderr + JSON.stringify(run.events)).toContain("turn.completed");
    expect(run.code).toBe(0);
    const agentText = run.events.find(
      (event) =>
        event["type"] === "item.completed" &&
        (event["item"] as { type?: string }).type === "agent_message",
    );
    expect(JSON.stringify(agentText)).toContain("Hello from the stub.");
    const rows = await storedFor(subject);
    expect(rows.at(-1)).toMatchObject({ role: "assistant", status: "completed" });
    expect(rows.at(-1)?.content).toContain("Hello from the stub.");
  });

  /** One Codex run of the tool turn, shared by the tests below (it takes a second or two). */
  let toolTurn: Promise<{ run: CodexRun; subject: string }> | undefined;
  function runToolTurn() {
    toolTurn ??= (async () => {
      const subject = uniqueName("codex");
      const { key } = await server.apiKeyFor(subject);
      return { run: await runCodex(baseUrl, key, "please run echo"), subject };
    })();
    return toolTurn;
  }

  it(
    "a turn with a shell tool call runs the command, sends its output back and completes",
    { timeout: 120_000 },
    async () => {
      const { run, subject } = await runToolTurn();
      expect(
        run.events.map((event) => event["type"]),
        run.stderr,
      ).toContain("turn.completed");
      expect(run.code).toBe(0);
      const command = run.events.find(
        (event) =>
          event["type"] === "item.completed" &&
          (event["item"] as { type?: string }).type === "command_execution",
      );
      expect(JSON.stringify(command)).toContain(TOOL_MARKER);
      const rows = await storedFor(subject);
      const responses = rows.filter(
        (row) => row.role === "assistant" && row.status === "completed",
      );
      expect(responses.length).toBeGreaterThanOrEqual(2);
      expect(rows.some((row) => row.role === "tool" && row.content.includes(TOOL_MARKER))).toBe(
        true,
      );
      expect(rows.at(-1)?.content).toContain("The tool said:");
    },
  );

  // Codex sends `store: false` and no `previous_response_id`: its second request carries the
  // whole history again, and the server continues the chain its first request stored (the
  // longest stored prefix of its items, docs/server/recorded-calls.md "Matching").
  it(
    "both model calls of the tool turn are stored as one chain (store: false, no previous_response_id)",
    { timeout: 120_000 },
    async () => {
      const { subject } = await runToolTurn();
      const rows = await storedFor(subject);
      expect(rows.length).toBeGreaterThan(0);
      // One conversation, one chain: every message continues the one before it.
      expect(new Set(rows.map((row) => row.conversation_id)).size).toBe(1);
      rows.slice(1).forEach((row, index) => {
        expect(row.previous_message_id).toBe(rows[index]?.id);
      });
      // Nothing stored twice: one tool call, one tool result, one answer after it.
      expect(rows.filter((row) => row.role === "tool")).toHaveLength(1);
      expect(rows.filter((row) => row.content.includes("toolu_codex_1"))).toHaveLength(2);
      expect(rows.filter((row) => row.role === "assistant")).toHaveLength(2);
    },
  );
});
