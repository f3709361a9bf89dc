import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { isGeminiCliFile } from "../../packages/library/src/interop/gemini-cli/file-names.js";
import { importGeminiCliFile } from "../../packages/library/src/interop/gemini-cli/import.js";
import { requestCost } from "../../packages/library/src/pricing/cost.js";
import {
  fixtureFiles,
  historyCalls,
  panelTexts,
  shortName,
  unansweredCalls,
} from "./fixture-files.js";

type Json = Record<string, unknown>;

const files = fixtureFiles("gemini-cli", ".json");
const corpus = (path: string): string => files.find((file) => file.includes(path)) ?? path;
const importFile = (file: string) => importGeminiCliFile(file, readFileSync(file));
const sessionOf = (file: string): Json => JSON.parse(readFileSync(file, "utf8")) as Json;
const messagesOf = (file: string): Json[] => (sessionOf(file).messages as Json[] | undefined) ?? [];

/** The text parts of a PartListUnion (a string, a part, or a list of both). */
function textsOf(content: unknown): string[] {
  if (typeof content === "string") return [content];
  const list = Array.isArray(content) ? content : [content];
  return list.flatMap((part) =>
    typeof part === "string"
      ? [part]
      : typeof (part as Json | null)?.text === "string" && (part as Json).thought !== true
        ? [(part as Json).text as string]
        : [],
  );
}

describe("gemini-cli importer on the real corpus: nothing dropped silently (issue 35 item 3)", () => {
  for (const file of files) {
    it(`${shortName(file)}: every record imported or reported; messages, thoughts, calls and results kept or reported`, () => {
      const result = importFile(file);
      const messages = messagesOf(file);
      // Record 1 is the session's own fields, record n + 1 its n-th message.
      expect(result.account.lines).toBe(1 + messages.length);
      expect(result.account.imported + result.account.leftOut).toBe(1 + messages.length);
      const reported = new Set(result.leftOut.flatMap((entry) => entry.lines));
      const { calls, results } = historyCalls(result.conversations);
      const shown = panelTexts(result.conversations);
      const history = result.conversations.flatMap(({ conversation }) =>
        conversation.history.flatMap((message) =>
          message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
        ),
      );
      messages.forEach((message, index) => {
        const record = index + 2;
        const kept = (found: boolean, what: string): void => {
          if (!found)
            expect(
              reported.has(record),
              `record ${record} (${what}) neither imported nor reported`,
            ).toBe(true);
        };
        for (const text of textsOf(message.content)) {
          if (text === "") continue;
          kept(history.includes(text) || shown.has(text), `${String(message.type)} text`);
          if (message.type === "info" || message.type === "warning" || message.type === "error")
            kept(shown.has(text), `${String(message.type)} message`);
        }
        for (const thought of (message.thoughts as Json[] | undefined) ?? []) {
          const description = String(thought.description ?? "");
          if (description === "") continue;
          kept(
            [...shown].some((text) => text.includes(description)),
            "thought",
          );
        }
        for (const call of (message.toolCalls as Json[] | undefined) ?? []) {
          const id = String(call.id);
          kept(calls.has(id), `call ${id}`);
          if (call.result !== undefined && call.result !== null)
            kept(results.has(id), `result of ${id}`);
        }
      });
      for (const imported of result.conversations) {
        expect(decodeConversation(encodeConversation(imported.conversation)).ok).toBe(true);
        expect(unansweredCalls(imported.conversation)).toEqual([]);
      }
    });
  }
});

describe("gemini-cli importer: what each field becomes (issue 35 item 3)", () => {
  it("user and gemini messages become the history; tool calls and results are paired by id", () => {
    const file = corpus("gemini-cli-pomodoro-timer.json");
    const conversation = importFile(file).conversations[0]?.conversation;
    expect(conversation?.history.map((message) => message.role).slice(0, 4)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    const firstCall = (messagesOf(file)[1]?.toolCalls as Json[])[0] as Json;
    expect(conversation?.history[1]?.content).toContainEqual({
      type: "toolCall",
      id: firstCall.id,
      name: "write_file",
      arguments: JSON.stringify(firstCall.args),
    });
    expect(conversation?.history[2]?.content[0]).toMatchObject({
      type: "toolResult",
      callID: firstCall.id,
      isError: false,
      content: expect.stringContaining("Successfully created and wrote to new file"),
    });
  });

  it("a failed call's error is its result, marked as an error; its resultDisplay is reported", () => {
    const file = corpus("gemini-cli-pomodoro-timer.json");
    const result = importFile(file);
    const failed = messagesOf(file)
      .flatMap((message) => (message.toolCalls as Json[] | undefined) ?? [])
      .find((call) => call.status === "error") as Json;
    const { results } = historyCalls(result.conversations);
    expect(results.get(String(failed.id))).toContain("A secondary check by an LLM");
    const block = result.conversations[0]?.conversation.history
      .flatMap((message) => message.content)
      .find((entry) => entry.type === "toolResult" && entry.callID === failed.id);
    expect(block).toMatchObject({ isError: true });
    expect(result.leftOut.find((entry) => entry.what === "tool resultDisplay")?.lines).toEqual([
      19,
    ]);
  });

  it("a cancelled call keeps Gemini CLI's cancellation as an error result and its item is cancelled", () => {
    const result = importFile(corpus("session-2026-03-18T01-58-b26e4930.json"));
    const conversation = result.conversations[0]?.conversation;
    const item = conversation?.items.find(
      (entry) => entry.type === "tool" && entry.callID === "cli_help_1773799313733_1",
    );
    expect(item).toMatchObject({ status: "cancelled" });
    expect(historyCalls(result.conversations).results.get("cli_help_1773799313733_1")).toBe(
      "[Operation Cancelled] Operation cancelled.",
    );
  });

  it("info and warning messages are notices, error messages failure items (kept in the panel)", () => {
    const conversation = importFile(corpus("session-2026-03-18T01-58-b26e4930.json"))
      .conversations[0]?.conversation;
    const info = conversation?.items.filter(
      (item) => item.type === "notice" && item.kind === "info",
    );
    expect(info?.map((item) => (item.type === "notice" ? item.text : ""))).toEqual([
      "Request cancelled.",
      "Request cancelled.",
    ]);
    expect(conversation?.items).toContainEqual(
      expect.objectContaining({
        type: "failure",
        message: "No recent API request found to export.",
      }),
    );
  });

  it("a file with no user or model message (one warning) gives no conversation; every record is reported", () => {
    const result = importFile(corpus("session-2026-03-18T15-20-76d8ed24.json"));
    expect(result.conversations).toEqual([]);
    expect(result.account).toMatchObject({ lines: 2, imported: 0, leftOut: 2 });
  });

  it("thoughts become thinking items (subject and description), as Claude Code's thinking is kept", () => {
    const file = corpus("session-2026-03-18T02-08-6745da32.json");
    const thought = (messagesOf(file)[1]?.thoughts as Json[])[0] as Json;
    const items = importFile(file).conversations[0]?.conversation.items ?? [];
    expect(items).toContainEqual(
      expect.objectContaining({
        type: "thinking",
        text: `**${String(thought.subject)}**\n\n${String(thought.description)}`,
      }),
    );
  });

  it("tokens are each call's usage (cached input as cache reads, thoughts billed as output) and priced", () => {
    const file = corpus("gemini-cli-pomodoro-timer.json");
    const imported = importFile(file).conversations[0];
    const tokens = messagesOf(file)[2]?.tokens as Record<string, number>;
    const answer = imported?.conversation.history[3];
    const call = answer === undefined ? undefined : imported?.calls?.get(answer);
    expect(call).toEqual({
      usage: {
        input: (tokens.input ?? 0) + (tokens.tool ?? 0) - (tokens.cached ?? 0),
        output: (tokens.output ?? 0) + (tokens.thoughts ?? 0),
        cacheRead: tokens.cached,
        cacheWrite: 0,
        webSearchRequests: 0,
      },
      model: "gemini-2.5-pro",
      provider: "gemini",
    });
    const cost = requestCost({
      provider: call?.provider ?? "",
      model: call?.model ?? "",
      usage: call?.usage ?? imported!.conversation.usage,
    });
    expect(cost.kind).toBe("estimated");
    // The first answer's tokens are all 0 (Gemini CLI lost them): reported, not priced.
    expect(importFile(file).leftOut.map((entry) => entry.what)).toContain(
      "tokens with every count 0",
    );
  });

  it("a sub-agent's session outside chats/<parent>/ is imported on its own (no parent guessed)", () => {
    const imported = importFile(corpus("session-2026-03-18T02-08-6745da32.json")).conversations[0];
    expect(imported?.parent).toBeUndefined();
    expect(imported?.name).toBe("gemini-cli-6745da32-772a-411b-bdd7-c780c0da1cfb");
  });
});

/**
 * The JSONL layout (Gemini CLI 0.39 and later). No real `.jsonl` session was found published
 * under a permissive licence (SOURCES.md, Gaps), so these are what Gemini CLI itself writes
 * (packages/core/src/services/chatRecordingService.ts): the migration of a real `.json` session
 * when it is resumed, and hand-written lines of each record kind.
 */
describe("gemini-cli importer: the JSONL layout (issue 35 item 3)", () => {
  /** `initialize(resumedSessionData)` of a `.json` file: a header, each message, `$set`. */
  function migrated(session: Json): string {
    const { sessionId, projectHash, startTime, lastUpdated, kind, directories, summary } = session;
    const header = { sessionId, projectHash, startTime, lastUpdated, kind, directories, summary };
    const lines = [header, ...((session.messages as Json[]) ?? []), { $set: { sessionId } }];
    return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
  }
  const jsonl = (name: string, text: string) => importGeminiCliFile(name, Buffer.from(text));

  it("a real session migrated to JSONL imports the same history as the .json file", () => {
    for (const file of files.filter((path) => !path.includes("15-20"))) {
      const whole = importFile(file).conversations[0]?.conversation.history;
      const lines = jsonl("/h/.gemini/tmp/p/chats/session-x.jsonl", migrated(sessionOf(file)));
      expect(lines.conversations[0]?.conversation.history, shortName(file)).toEqual(whole);
      expect(lines.account.imported + lines.account.leftOut).toBe(lines.account.lines);
    }
  });

  const header = {
    sessionId: "s-1",
    projectHash: "h",
    startTime: "t",
    lastUpdated: "t",
    kind: "main",
  };
  const user = (id: string, text: string) => ({
    id,
    timestamp: "t",
    type: "user",
    content: [{ text }],
  });
  const answer = (id: string, text: string, extra: Json = {}) => ({
    id,
    timestamp: "t",
    type: "gemini",
    content: text,
    model: "gemini-2.5-pro",
    ...extra,
  });
  const lines = (...records: Json[]) => records.map((record) => JSON.stringify(record)).join("\n");

  it("a message written again under its id replaces the earlier copy, which is reported", () => {
    const call = { id: "c1", name: "ls", args: {}, status: "success", timestamp: "t" };
    const result = jsonl(
      "/h/chats/session-a.jsonl",
      lines(
        header,
        user("u1", "list"),
        { $set: { lastUpdated: "t2" } },
        answer("g1", ""),
        answer("g1", "", {
          toolCalls: [
            {
              ...call,
              result: [
                { functionResponse: { id: "c1", name: "ls", response: { output: "a.txt" } } },
              ],
            },
          ],
          tokens: { input: 100, output: 5, cached: 40, thoughts: 7, tool: 0, total: 112 },
        }),
        answer("g2", "One file."),
      ),
    );
    expect(result.account).toMatchObject({ lines: 6, imported: 5, leftOut: 1 });
    expect(
      result.leftOut.find((entry) => entry.what === "earlier copy of a message")?.lines,
    ).toEqual([4]);
    const conversation = result.conversations[0]?.conversation;
    expect(conversation?.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(conversation?.usage).toMatchObject({ input: 60, output: 12, cacheRead: 40 });
  });

  it("$rewindTo removes the message and those after it; they are reported and kept as a branch", () => {
    const result = jsonl(
      "/h/chats/session-b.jsonl",
      lines(
        header,
        user("u1", "first try"),
        answer("g1", "wrong answer"),
        { $rewindTo: "u1" },
        user("u2", "second try"),
        answer("g2", "right answer"),
      ),
    );
    const imported = result.conversations[0];
    const texts = imported?.conversation.history.flatMap((message) =>
      message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
    );
    expect(texts).toEqual(["second try", "right answer"]);
    expect(imported?.branches?.length).toBe(1);
    expect(result.leftOut.find((entry) => entry.what === "rewound message")?.lines).toEqual([2, 3]);
    expect(result.account).toMatchObject({ lines: 6, imported: 4, leftOut: 2 });
  });

  it("a $set of the message list replaces the messages; dropped ones are reported", () => {
    const result = jsonl(
      "/h/chats/session-c.jsonl",
      lines(
        header,
        user("u1", "long question"),
        answer("g1", "long answer"),
        { $set: { messages: [user("s1", "summary of the conversation")], summary: "Title" } },
        answer("g2", "next"),
      ),
    );
    expect(
      result.leftOut.find((entry) => entry.what === "message dropped by a $set")?.lines,
    ).toEqual([2, 3]);
    const conversation = result.conversations[0]?.conversation;
    expect(conversation?.items).toContainEqual(
      expect.objectContaining({ type: "notice", kind: "title", text: "Title" }),
    );
    expect(conversation?.history.map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("a sub-agent's session in chats/<parent>/ names its parent; the parent's call names the agent", () => {
    const parent = jsonl(
      "/h/.gemini/tmp/p/chats/session-2026-05-01T10-00-s-1.jsonl",
      lines(
        header,
        user("u1", "investigate"),
        answer("g1", "", {
          toolCalls: [
            {
              id: "c1",
              name: "codebase_investigator",
              args: {},
              status: "success",
              agentId: "agent-7",
              result: "done",
            },
          ],
        }),
      ),
    );
    expect(parent.conversations[0]?.subagentCalls?.get("agent-7")).toBe("c1");
    const child = jsonl(
      "/h/.gemini/tmp/p/chats/s-1/agent-7.jsonl",
      lines(
        { ...header, sessionId: "agent-7", kind: "subagent" },
        user("a1", "task"),
        answer("a2", "found"),
      ),
    );
    expect(child.conversations[0]).toMatchObject({
      name: "gemini-cli-s-1-agent-agent-7",
      sourceId: "s-1/agent-7",
      parent: { sourceId: "s-1", agentId: "agent-7" },
    });
  });

  it("lines that are not JSON, or of no known kind, are reported by number", () => {
    const result = jsonl(
      "/h/chats/session-d.jsonl",
      `${lines(header, user("u1", "hi"), { other: 1 })}\n{broken\n`,
    );
    expect(result.account).toMatchObject({ lines: 4, imported: 2, leftOut: 2 });
    expect(result.leftOut.map((entry) => entry.lines)).toEqual([[4], [3]]);
  });
});

describe("gemini-cli importer: /chat save checkpoints (issue 35 item 3)", () => {
  // Hand-written in the Gemini API Content shape Gemini CLI saves (packages/core/src/core/
  // logger.ts): no real checkpoint file was found published (SOURCES.md, Gaps).
  const png = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
    "base64",
  );
  const contents = [
    {
      role: "user",
      parts: [{ text: "This is the Gemini CLI. We are setting up the context for our chat." }],
    },
    { role: "model", parts: [{ text: "Got it. Thanks for the context!" }] },
    {
      role: "user",
      parts: [
        { text: "what is in this image?" },
        { inlineData: { mimeType: "image/png", data: png.toString("base64") } },
      ],
    },
    {
      role: "model",
      parts: [
        { text: "**Looking** at the image", thought: true },
        { functionCall: { name: "read_file", args: { path: "a.txt" } }, thoughtSignature: "c2ln" },
      ],
    },
    {
      role: "user",
      parts: [{ functionResponse: { name: "read_file", response: { output: "hello" } } }],
    },
    { role: "model", parts: [{ text: "A single pixel." }] },
  ];

  it("both shapes (a list of contents, and {history, authType}) import the same history", () => {
    const list = importGeminiCliFile(
      "/h/.gemini/tmp/p/checkpoint-my%20tag.json",
      Buffer.from(JSON.stringify(contents)),
    );
    const wrapped = importGeminiCliFile(
      "/h/.gemini/tmp/p/checkpoint-my%20tag.json",
      Buffer.from(JSON.stringify({ history: contents, authType: "oauth-personal" }, null, 2)),
    );
    const imported = list.conversations[0];
    expect(imported).toMatchObject({
      name: "gemini-cli-p-checkpoint-my_tag",
      sourceId: "p/checkpoint-my tag",
    });
    expect(wrapped.conversations[0]?.conversation.history).toEqual(imported?.conversation.history);
    expect(list.account).toMatchObject({ lines: 6, imported: 6, leftOut: 0 });
    const history = imported?.conversation.history ?? [];
    expect(history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(history[2]?.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(imported?.images.size).toBe(1);
    expect(history[4]?.content[0]).toMatchObject({
      type: "toolResult",
      toolName: "read_file",
      content: "hello",
    });
    expect(imported?.conversation.items).toContainEqual(
      expect.objectContaining({ type: "thinking", text: "**Looking** at the image" }),
    );
    expect(list.leftOut.find((entry) => entry.what === "thought signature")?.lines).toEqual([4]);
  });
});

describe("gemini-cli importer: which files a folder gives (issue 35 item 3)", () => {
  it("sessions in chats/, sub-agents in chats/<parent>/, checkpoints; never logs, settings or credentials", () => {
    const root = "/home/u/.gemini";
    const accepted = (path: string) => isGeminiCliFile(path.split("/").pop() ?? "", path);
    expect(accepted(`${root}/tmp/abc/chats/session-2026-05-01T10-00-1234abcd.jsonl`)).toBe(true);
    expect(accepted(`${root}/tmp/abc/chats/session-2025-10-21T20-04-0b23371a.json`)).toBe(true);
    expect(accepted(`${root}/tmp/abc/chats/0b23371a-ce2e/agent-1.jsonl`)).toBe(true);
    expect(accepted(`${root}/tmp/abc/checkpoint-release.json`)).toBe(true);
    expect(accepted(`/home/u/exported/session-2025-10-21T20-04-0b23371a.json`)).toBe(true);
    expect(accepted(`${root}/tmp/abc/logs/session-0b23371a.jsonl`)).toBe(false);
    expect(accepted(`${root}/tmp/abc/chats/notes.jsonl`)).toBe(false);
    expect(accepted(`${root}/tmp/abc/logs.json`)).toBe(false);
    expect(accepted(`${root}/settings.json`)).toBe(false);
    expect(accepted(`${root}/oauth_creds.json`)).toBe(false);
    expect(accepted(`${root}/tmp/abc/checkpoints/2026-05-01-file.txt-replace.json`)).toBe(false);
  });
});
