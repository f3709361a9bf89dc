/**
 * Issue 35 item 2 with the real Gemini CLI (`@google/gemini-cli`, Apache-2.0, a pinned dev
 * dependency): GOOGLE_GEMINI_BASE_URL at the server, a verbatim key as GEMINI_API_KEY, a
 * temporary HOME whose settings select API-key auth, and the local Gemini stub
 * (test/support/gemini-upstream.ts, captured real bodies) behind the server. A `gemini -p` turn
 * with a tool call (list_directory, run by the CLI, its functionResponse sent back) and a
 * `--resume latest` prompt of the same session are one conversation, each main call placed after
 * one before it; the stub received the recorded bytes; the gateway key never reached it.
 *
 * Every request the CLI makes is accounted for: before each prompt its model router asks a
 * flash-lite model for a complexity score (`:generateContent` with a JSON schema; recorded too,
 * placed by its contents like any call), then the main model streams
 * (`:streamGenerateContent?alt=sse`). No `:countTokens`, and nothing outside the machine:
 * HTTPS_PROXY points at a closed port.
 *
 * The CLI: VERBATIM_GEMINI_CLI_BIN, else node_modules/@google/gemini-cli/bundle/gemini.js. Without
 * it the test is skipped with a notice.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { freshDatabase, type FreshDatabase, uniqueName } from "../support/databases.js";
import {
  CAPTURED,
  functionCallReply,
  startGeminiUpstream,
  textReply,
  type GeminiObject,
  type GeminiRequestSeen,
  type GeminiUpstream,
} from "../support/gemini-upstream.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { TEST_OPERATOR_TOKEN, testServer, type TestServer } from "../support/server.js";

const root = new URL("../../", import.meta.url).pathname;
const geminiBin = [
  process.env["VERBATIM_GEMINI_CLI_BIN"],
  join(root, "node_modules/@google/gemini-cli/bundle/gemini.js"),
].find((path): path is string => path !== undefined && path !== "" && existsSync(path));
if (geminiBin === undefined) {
  process.stderr.write(
    "\n[notice] Gemini CLI is not installed: test/clients/gemini-cli.test.ts is SKIPPED. " +
      "Run npm install (it is the dev dependency @google/gemini-cli) or set VERBATIM_GEMINI_CLI_BIN.\n\n",
  );
}

const UPSTREAM_KEY = "gemini-upstream-key-cli";
const FILE_IN_WORKSPACE = "notes-from-the-workspace.txt";
const FIRST_ANSWER = "The folder holds one file.";
const SECOND_ANSWER = "You are welcome.";
/** One CLI run's limit: two runs and the checks stay within the test's 60 s. */
const RUN_LIMIT_MS = 28_000;

interface GeminiResult {
  readonly session_id: string;
  readonly response: string;
  readonly stats: {
    readonly tools: {
      readonly totalCalls: number;
      readonly totalSuccess: number;
      readonly byName: Record<string, unknown>;
    };
  };
}

/** The router's side call: generateContent asking for a complexity score as JSON. */
function isRouterCall(request: GeminiRequestSeen): boolean {
  const config = request.body["generationConfig"] as GeminiObject | undefined;
  const schema = config?.["responseJsonSchema"] as GeminiObject | undefined;
  const properties = schema?.["properties"] as GeminiObject | undefined;
  return request.method === "generateContent" && properties?.["complexity_score"] !== undefined;
}

function lastContent(request: GeminiRequestSeen): GeminiObject | undefined {
  const contents = request.body["contents"] as GeminiObject[] | undefined;
  return contents?.at(-1);
}

function hasFunctionResponse(content: GeminiObject | undefined): boolean {
  const parts = (content?.["parts"] as GeminiObject[] | undefined) ?? [];
  return parts.some((part) => part["functionResponse"] !== undefined);
}

describe.skipIf(geminiBin === undefined)("Gemini CLI through the gateway", () => {
  let fresh: FreshDatabase;
  let upstream: GeminiUpstream;
  let server: TestServer;
  let baseUrl: string;
  let key: string;
  let home: string;
  let workspace: string;
  let subject: string;
  const unexpected: string[] = [];

  beforeAll(async () => {
    fresh = await freshDatabase("sqlite");
    // The stub refuses any key but the provider's: a forwarded gateway key would fail the call.
    upstream = await startGeminiUpstream({ apiKey: UPSTREAM_KEY });
    upstream.reply = (request) => {
      if (isRouterCall(request)) {
        const score = { complexity_reasoning: "A short request.", complexity_score: 10 };
        return textReply(JSON.stringify(score), CAPTURED.textJson);
      }
      if (request.method !== "streamGenerateContent") {
        unexpected.push(request.url);
        return { status: 500, body: `the test's stub does not expect ${request.url}` };
      }
      const last = lastContent(request);
      if (hasFunctionResponse(last)) return textReply(FIRST_ANSWER);
      if (JSON.stringify(last).includes("list the files")) {
        return functionCallReply([{ name: "list_directory", args: { dir_path: "." } }]);
      }
      return textReply(SECOND_ANSWER);
    };
    server = await testServer(fresh.database, {
      upstream: upstreamConfigFromEnv({
        GEMINI_API_KEY: UPSTREAM_KEY,
        GEMINI_BASE_URL: upstream.baseUrl,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    baseUrl = `http://127.0.0.1:${port}`;
    subject = uniqueName("gemini");
    key = (await server.apiKeyFor(subject)).key;
    home = mkdtempSync(join(tmpdir(), "verbatim-gemini-home-"));
    workspace = mkdtempSync(join(tmpdir(), "verbatim-gemini-work-"));
    writeFileSync(join(workspace, FILE_IN_WORKSPACE), "hello\n");
    mkdirSync(join(home, ".gemini"));
    mkdirSync(join(home, "tmp"));
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    };
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
  });
  afterAll(async () => {
    await server?.app.close();
    await upstream?.close();
    await fresh?.cleanup();
    for (const dir of [home, workspace]) {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });

  function gemini(args: readonly string[]): Promise<GeminiResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [geminiBin as string, ...args, "--output-format", "json"],
        {
          cwd: workspace,
          env: {
            PATH: process.env["PATH"] ?? "/usr/bin:/bin",
            HOME: home,
            // Its error reports (gemini-client-error-*.json) go to the temporary HOME too.
            TMPDIR: join(home, "tmp"),
            // Settings of this machine (/etc/gemini-cli) stay out of the run.
            GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(home, "system-settings.json"),
            GEMINI_CLI_TRUST_WORKSPACE: "true",
            // Skips only the re-exec with a larger heap: the same requests, a faster start.
            GEMINI_CLI_NO_RELAUNCH: "true",
            GOOGLE_GEMINI_BASE_URL: baseUrl,
            GEMINI_API_KEY: key,
            HTTPS_PROXY: "http://127.0.0.1:9",
            HTTP_PROXY: "http://127.0.0.1:9",
            NO_PROXY: "127.0.0.1,localhost",
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill("SIGKILL");
      }, RUN_LIMIT_MS);
      child.on("error", (error) =>
        reject(
          new Error(`cannot run Gemini CLI at ${geminiBin} (${error.message}): run npm install`),
        ),
      );
      child.on("close", (code) => {
        clearTimeout(timer);
        const how = killed ? `was stopped after ${RUN_LIMIT_MS} ms` : `exited ${code}`;
        try {
          const parsed = JSON.parse(out) as GeminiResult;
          if (code !== 0) reject(new Error(`gemini ${how}: ${out}\n${err}`));
          else resolve(parsed);
        } catch {
          reject(new Error(`gemini ${how} without a JSON result: ${out}\n${err}`));
        }
      });
    });
  }

  it("a tool turn and its --resume are one conversation, byte for byte, without the gateway key (issue 35 item 2)", async () => {
    const first = await gemini(["-p", "Please list the files here."]);
    expect(first.response).toBe(FIRST_ANSWER);
    expect(first.stats.tools.totalCalls).toBe(1);
    expect(first.stats.tools.totalSuccess).toBe(1);
    expect(Object.keys(first.stats.tools.byName)).toEqual(["list_directory"]);
    const second = await gemini(["-p", "Thanks.", "--resume", "latest"]);
    expect(second.session_id).toBe(first.session_id);
    expect(second.response).toBe(SECOND_ANSWER);

    // What the CLI sent: per prompt a router call, then the main model until it answers in text.
    expect(unexpected).toEqual([]);
    const kinds = upstream.requests.map((request) =>
      isRouterCall(request) ? "router" : request.method,
    );
    expect(kinds).toEqual([
      "router",
      "streamGenerateContent", // → functionCall list_directory
      "streamGenerateContent", // its functionResponse → the answer
      "router",
      "streamGenerateContent", // the resumed prompt
    ]);
    const main = upstream.requests.filter((request) => !isRouterCall(request));
    for (const request of main) expect(request.query.get("alt")).toBe("sse");
    // The CLI ran the tool: its output, naming the workspace's file, went back to the model.
    expect(JSON.stringify(lastContent(main[1] as GeminiRequestSeen))).toContain(FILE_IN_WORKSPACE);

    // The gateway key reached the server only: the stub saw the provider's key, in the header.
    for (const request of upstream.requests) {
      expect(request.headers["x-goog-api-key"]).toBe(UPSTREAM_KEY);
      expect(request.query.has("key")).toBe(false);
      expect(JSON.stringify(request.headers)).not.toContain(key);
      expect(request.bytes.toString("utf8")).not.toContain(key);
    }

    // Every model call is recorded (countTokens would not be; the CLI made none), in order.
    await callsPlaced(fresh.database, subject, upstream.requests.length);
    const calls = await recordedCallRows(fresh.database, subject);
    expect(calls.length).toBe(upstream.requests.length);
    for (const [index, call] of calls.entries()) {
      const request = upstream.requests[index] as GeminiRequestSeen;
      // The stub received exactly the bytes the server recorded (what the CLI sent).
      expect(call.request.equals(request.bytes)).toBe(true);
      expect(call.path).toBe(request.url);
      expect(call.status_code).toBe(200);
      expect(call.request_headers).not.toContain(key);
    }

    // The main calls are one conversation. `--resume` rebuilds the history from the session
    // file, which keeps no thought signature (the CLI sends its placeholder in place of the
    // model's) and gives the tool's result twice (from the call's record and from the user
    // message holding it): the resumed request shares only contents[0] with the tool turn's, so
    // it is placed after the first call, a branch of the same conversation.
    const [toolCall, toolAnswer, resumed] = main.map(
      (request) => request.body["contents"] as GeminiObject[],
    );
    const signatureOf = (content: GeminiObject | undefined) =>
      ((content?.["parts"] as GeminiObject[] | undefined)?.[0] ?? {})["thoughtSignature"];
    expect(toolCall?.length).toBe(1);
    expect(toolAnswer?.length).toBe(3);
    expect(signatureOf(toolAnswer?.[1])).toMatch(/^Ci/); // the captured answer's signature
    expect(signatureOf(resumed?.[1])).toBe("skip_thought_signature_validator");
    expect((resumed?.[2]?.["parts"] as unknown[]).length).toBe(2);
    expect(resumed?.[2]?.["parts"]).toEqual(
      [toolAnswer?.[2]?.["parts"], toolAnswer?.[2]?.["parts"]].flat(),
    );
    expect(resumed?.[0]).toEqual(toolAnswer?.[0]);

    const mainCalls = calls.filter((_, index) => kinds[index] !== "router");
    const routerCalls = calls.filter((_, index) => kinds[index] === "router");
    const conversation = mainCalls[0]?.conversation_id;
    expect(conversation).toMatch(/^conv_/);
    expect(mainCalls.map((call) => call.conversation_id)).toEqual(
      mainCalls.map(() => conversation),
    );
    const [callOne, callTwo, callThree] = mainCalls;
    expect([callOne?.previous_call_id, callOne?.matched_count]).toEqual([null, 0]);
    expect(callTwo?.previous_call_id).toBe(callOne?.id);
    expect(callTwo?.matched_count).toBeGreaterThanOrEqual(1);
    expect([callOne?.id, callTwo?.id]).toContain(callThree?.previous_call_id);
    expect(callThree?.matched_count).toBeGreaterThanOrEqual(1);
    // The conversation holds the tool turn and both answers.
    const stored = await fresh.database.db
      .selectFrom("ai_gateway_messages")
      .select(["role", "content"])
      .where("conversation_id", "=", conversation as string)
      .execute();
    const blocks = stored.flatMap(
      (row) => JSON.parse(row.content) as { type: string; name?: string; content?: unknown }[],
    );
    // The tool call is stored once: the answer the server read from the response (no id there)
    // is the model content the CLI sends back with an id of its own, in the next call and in the
    // resumed one (whose signature is the CLI's placeholder).
    expect(
      blocks.filter((block) => block.type === "toolCall" && block.name === "list_directory"),
    ).toHaveLength(1);
    expect(
      blocks.some(
        (block) =>
          block.type === "toolResult" && JSON.stringify(block.content).includes(FILE_IN_WORKSPACE),
      ),
    ).toBe(true);
    const texts = blocks.map((block) => (block as { text?: string }).text);
    expect(texts).toContain(FIRST_ANSWER);
    expect(texts).toContain(SECOND_ANSWER);
    // The router's calls, as the server places them: chains match on `contents` only (the
    // system instruction and tools are the cache's prefix, not part of the match:
    // docs/server/recorded-calls.md, "Gemini"). The first router call sends the session context
    // and the prompt as two contents, which no main call repeats: a conversation of its own.
    // The second repeats the main calls' contents[0] (both in one content): a branch of the
    // session's conversation after its first call, which the cache report shows broken at the
    // system instruction.
    const [routerOne, routerTwo] = routerCalls;
    expect(routerCalls.length).toBe(2);
    expect(routerOne?.conversation_id).not.toBe(conversation);
    expect([routerOne?.previous_call_id, routerOne?.matched_count]).toEqual([null, 0]);
    expect(routerTwo?.conversation_id).toBe(conversation);
    expect([routerTwo?.previous_call_id, routerTwo?.matched_count]).toEqual([callOne?.id, 1]);

    const response = await fetch(`${baseUrl}/ai-gateway/conversations/${conversation}/cache`, {
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const report = (await response.json()) as {
      calls: { call_id: string; cache: string; difference: { path: string } | null }[];
    };
    expect(report.calls.map((call) => call.call_id)).toEqual(
      [callOne, callTwo, routerTwo, callThree].map((call) => call?.id),
    );
    process.stdout.write(
      `[gemini-cli] requests: ${kinds.join(", ")}; main calls matched ${mainCalls
        .map((call) => call.matched_count)
        .join(", ")}; cache per call of the session: ${report.calls
        .map((call) =>
          call.difference === null ? call.cache : `${call.cache} at ${call.difference.path}`,
        )
        .join(", ")}\n`,
    );
    // The resumed call keeps the first call's prefix when the CLI sent the same system
    // instruction, tools and settings again. The CLI builds them anew at each start, and once
    // (a busy machine) it sent the resumed prompt a different one: the report must then say
    // the prefix broke there, and no more.
    const besidesContents = (request: GeminiRequestSeen | undefined) =>
      JSON.stringify({ ...request?.body, contents: undefined });
    const sameSetup = besidesContents(main[0]) === besidesContents(main[2]);
    expect(report.calls.map((call) => call.cache)).toEqual([
      "first",
      "kept",
      "broken",
      sameSetup ? "kept" : "broken",
    ]);
    expect(report.calls[2]?.difference?.path).toBe("$.systemInstruction.parts[0].text");
    if (!sameSetup) expect(report.calls[3]?.difference?.path).not.toMatch(/^\$\.contents/);
  }, 60_000);
});
