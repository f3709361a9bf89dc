/**
 * Regression (issue 31): imported into the store, Claude Code's `message.usage` and Codex's
 * `token_count` events were dropped (the console said "No model usage stored for these
 * messages"). Each assistant message that ends a model call now carries that call's usage,
 * model and provider (B3), so the console's per-message cost and its totals match the source
 * and a package import of the same file, on both databases. The expectations are computed here
 * from the raw source lines, not through the importers.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { requestCost } from "../../packages/library/src/pricing/index.js";
import { usageTotals } from "../../web/src/conversation-model.js";
import type { StoredMessage } from "../../web/src/api.js";
import { testServer } from "../support/server.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { writeClineNativeTask } from "./cline-native-task.js";
import { fixturesRoot } from "./fixture-files.js";

type Json = Record<string, unknown>;

interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

const CLAUDE = `${fixturesRoot}claude-code/2.1-subagents/turn-2.jsonl`;
const CODEX = `${fixturesRoot}codex/0.125/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl`;
const GEMINI = `${fixturesRoot}gemini-cli/json-2025-10/gemini-cli-pomodoro-timer.json`;
const OPENCODE = `${fixturesRoot}opencode/export/ses_39c0a3da8ffeFQWvKTGUJWivpv.json`;
/** A Roo Code task whose API history was condensed: most requests' answers are gone from it. */
const ROO_CONDENSED = `${fixturesRoot}cline/roo-3.2x-condensed/ac8aa7b4-319c-4925-a139-4f4adca81921`;
/** A Claude Code session with a compaction: the calls before it end no message of the history. */
const CLAUDE_COMPACTED = `${fixturesRoot}claude-code/2.1-real/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl`;
/** A Gemini CLI session whose first calls wrote no message (their content is empty). */
const GEMINI_EMPTY_CALLS = `${fixturesRoot}gemini-cli/json-2026-03/session-2026-03-18T02-08-6745da32.json`;
/** A Codex rollout that reports each call twice (the repeat must not count again). */
const CODEX_REPEATS = `${fixturesRoot}codex/0.104-sanitized/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl`;

const linesOf = (file: string): Json[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);
const record = (value: unknown): Json => (value ?? {}) as Json;
const count = (value: unknown): number => (typeof value === "number" ? value : 0);

/** Claude Code: per message id, the usage of its last line (every line of a split message repeats it). */
function claudeCalls(file: string): Map<string, { tokens: Tokens; model: string; lines: number }> {
  const calls = new Map<string, { tokens: Tokens; model: string; lines: number }>();
  for (const line of linesOf(file)) {
    if (line["type"] !== "assistant") continue;
    const message = record(line["message"]);
    const usage = record(message["usage"]);
    const id = String(message["id"]);
    calls.set(id, {
      tokens: {
        input: count(usage["input_tokens"]),
        output: count(usage["output_tokens"]),
        cacheRead: count(usage["cache_read_input_tokens"]),
        cacheWrite: count(usage["cache_creation_input_tokens"]),
      },
      model: String(message["model"]),
      lines: (calls.get(id)?.lines ?? 0) + 1,
    });
  }
  return calls;
}

/** Codex: each call's `last_token_usage`, in order, once however often its report is repeated. */
function codexCalls(file: string): { tokens: Tokens[]; model: string } {
  const tokens: Tokens[] = [];
  let previous: string | undefined;
  let model = "";
  for (const line of linesOf(file)) {
    const payload = record(line["payload"]);
    if (line["type"] === "turn_context") model = String(payload["model"]);
    if (line["type"] !== "event_msg" || payload["type"] !== "token_count") continue;
    const info = payload["info"];
    if (info === null || info === undefined) continue;
    const totals = JSON.stringify(record(info)["total_token_usage"]);
    if (totals === previous) continue;
    previous = totals;
    const last = record(record(info)["last_token_usage"]);
    const cached = count(last["cached_input_tokens"]);
    tokens.push({
      input: count(last["input_tokens"]) - cached,
      output: count(last["output_tokens"]),
      cacheRead: cached,
      cacheWrite: 0,
    });
  }
  return { tokens, model };
}

/** Roo Code: each `api_req_started` UI message with counts (its JSON text), in order. */
function rooRequests(folder: string): { tokens: Tokens; cost: number }[] {
  const ui = JSON.parse(readFileSync(join(folder, "ui_messages.json"), "utf8")) as Json[];
  return ui
    .filter((message) => message["say"] === "api_req_started")
    .map((message) => JSON.parse(String(message["text"])) as Json)
    .filter((info) => typeof info["tokensIn"] === "number" || typeof info["tokensOut"] === "number")
    .map((info) => ({
      tokens: {
        input: count(info["tokensIn"]),
        output: count(info["tokensOut"]),
        cacheRead: count(info["cacheReads"]),
        cacheWrite: count(info["cacheWrites"]),
      },
      cost: count(info["cost"]),
    }));
}

const sum = (list: readonly Tokens[]): Tokens =>
  list.reduce(
    (total, tokens) => ({
      input: total.input + tokens.input,
      output: total.output + tokens.output,
      cacheRead: total.cacheRead + tokens.cacheRead,
      cacheWrite: total.cacheWrite + tokens.cacheWrite,
    }),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  );

const tokensOf = (usage: Json | undefined): Tokens => ({
  input: count(usage?.["input"]),
  output: count(usage?.["output"]),
  cacheRead: count(usage?.["cacheRead"]),
  cacheWrite: count(usage?.["cacheWrite"]),
});

const packages = mkdtempSync(join(tmpdir(), "verbatim-import-usage-"));
afterAll(() => rmSync(packages, { recursive: true, force: true }));

/** The conversation's usage as a package import of `file` writes it. */
async function packageUsage(source: string, file: string): Promise<Tokens> {
  const io = bufferIO({ cwd: packages });
  const into = join(packages, `${source}-${Math.random().toString(36).slice(2)}`);
  expect(await main(["import", source, file, "--into", into, "--json"], io)).toBe(0);
  const report = JSON.parse(io.out().toString("utf8")) as { conversations: { path: string }[] };
  const path = join(report.conversations[0]?.path ?? "", "agent", "conversation.json");
  return tokensOf((JSON.parse(readFileSync(path, "utf8")) as Json)["usage"] as Json);
}

type Reply = StoredMessage & {
  cost?: { kind: string; dollars?: number };
  metadata: { gateway: Json };
};

describeDatabaseTargets("issue 31: usage of sessions imported into the store", (db) => {
  /** Imports `file` as `subject`; the conversation's messages as the console's route gives them. */
  async function importAndRead(source: string, file: string, subject: string) {
    const result = await db.run([
      "import",
      source,
      file,
      "--into",
      db.target,
      "--subject",
      subject,
      "--json",
    ]);
    expect(result.code, result.err).toBe(0);
    const report = JSON.parse(result.out) as {
      conversations: { conversationId: string; outcome: string }[];
    };
    const conversationId = report.conversations[0]?.conversationId ?? "";
    const server = await testServer(db.database);
    const messages: Reply[] = [];
    try {
      let cursor: string | null = null;
      do {
        const reply = await server.app.inject({
          method: "GET",
          url: `/ai-gateway/conversations/${conversationId}/messages?view=stored&limit=1000${cursor === null ? "" : `&cursor=${cursor}`}`,
          headers: server.operator,
        });
        expect(reply.statusCode).toBe(200);
        const page = reply.json() as { messages: Reply[]; next_cursor: string | null };
        messages.push(...page.messages);
        cursor = page.next_cursor;
      } while (cursor !== null);
    } finally {
      await server.app.close();
    }
    return { outcomes: report.conversations.map((entry) => entry.outcome), messages };
  }

  const withUsage = (messages: readonly Reply[]): Reply[] =>
    messages
      .filter((message) => message.metadata.gateway["usage"] !== undefined)
      .sort((a, b) => (a.depth ?? 0) - (b.depth ?? 0));

  /** The console's totals of the messages against the source's, and each message's cost. */
  function expectTotals(messages: readonly Reply[], calls: readonly Tokens[]): void {
    const totals = usageTotals(messages);
    const expected = sum(calls);
    expect(totals).toMatchObject({ calls: calls.length, ...expected, unknown: 0 });
    let dollars = 0;
    for (const message of withUsage(messages)) {
      const gateway = message.metadata.gateway;
      const cost = requestCost({
        provider: String(gateway["provider"]),
        model: String(gateway["model"]),
        usage: gateway["usage"] as Parameters<typeof requestCost>[0]["usage"],
        at: new Date(message.created_at),
      });
      expect(cost.kind).toBe("estimated");
      expect(message.cost).toEqual(cost);
      dollars += message.cost?.dollars ?? 0;
    }
    expect(totals.estimated).toBe(calls.length);
    expect(totals.dollars).toBeCloseTo(dollars, 10);
    expect(totals.dollars).toBeGreaterThan(0);
  }

  it("issue 31 B3: a Claude Code message split over several lines carries its call's usage once, with model and cost; the totals match the source and a package import", async () => {
    const calls = claudeCalls(CLAUDE);
    // The file's messages are split across lines (one per content block).
    expect([...calls.values()].some((call) => call.lines > 1)).toBe(true);
    const { messages } = await importAndRead("claude-code", CLAUDE, "claude-usage");
    const answered = withUsage(messages);
    // Each stored call is one message id of the source: found by its tool call or text.
    const source = linesOf(CLAUDE).filter((line) => line["type"] === "assistant");
    const idOf = (message: Reply): string => {
      const block = message.content[0] as Json;
      const line = source.find((candidate) =>
        ((record(candidate["message"])["content"] ?? []) as Json[]).some((part) =>
          block["type"] === "toolCall"
            ? part["id"] === block["id"]
            : part["text"] === block["text"],
        ),
      );
      return String(record(line?.["message"])["id"]);
    };
    const ids = answered.map(idOf);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual([...calls.keys()].sort());
    for (const message of answered) {
      const call = calls.get(idOf(message));
      expect(message.role).toBe("assistant");
      expect(tokensOf(message.metadata.gateway["usage"] as Json)).toEqual(call?.tokens);
      expect(message.metadata.gateway).toMatchObject({ model: call?.model, provider: "anthropic" });
    }
    const expected = [...calls.values()].map((call) => call.tokens);
    expectTotals(messages, expected);
    expect(await packageUsage("claude-code", CLAUDE)).toEqual(sum(expected));
  });

  it("issue 31 B3: each Codex call's last_token_usage is on the assistant message that ends it, with model and cost; the totals match the source and a package import", async () => {
    const { tokens, model } = codexCalls(CODEX);
    expect(tokens.length).toBe(66);
    const { messages } = await importAndRead("codex", CODEX, "codex-usage");
    const answered = withUsage(messages);
    expect(answered.map((message) => message.role)).toEqual(tokens.map(() => "assistant"));
    expect(answered.map((message) => tokensOf(message.metadata.gateway["usage"] as Json))).toEqual(
      tokens,
    );
    for (const message of answered)
      expect(message.metadata.gateway).toMatchObject({ model, provider: "openai" });
    expectTotals(messages, tokens);
    expect(await packageUsage("codex", CODEX)).toEqual(sum(tokens));
  });

  it("issue 31 B3: a Codex call reported twice counts once", async () => {
    const { tokens } = codexCalls(CODEX_REPEATS);
    const events = linesOf(CODEX_REPEATS).filter(
      (line) => record(line["payload"])["type"] === "token_count",
    );
    expect(events.length).toBeGreaterThan(tokens.length + 1);
    const { messages } = await importAndRead("codex", CODEX_REPEATS, "codex-repeats");
    expect(
      withUsage(messages).map((message) => tokensOf(message.metadata.gateway["usage"] as Json)),
    ).toEqual(tokens);
    expectTotals(messages, tokens);
    expect(await packageUsage("codex", CODEX_REPEATS)).toEqual(sum(tokens));
  });

  it("issue 35 item 4: Gemini CLI, Cline and OpenCode sessions show each call's usage and cost in the console; the totals match a package import", async () => {
    // A Cline task in the shapes Cline 3.51 writes (no licensed real one is published).
    const cline = dirname(writeClineNativeTask(packages));
    for (const [source, file] of [
      ["gemini-cli", GEMINI],
      ["cline", cline],
      ["opencode", OPENCODE],
    ] as const) {
      const { messages } = await importAndRead(source, file, `${source}-usage`);
      const totals = usageTotals(messages);
      expect(totals.calls, source).toBeGreaterThan(0);
      const { input, output, cacheRead, cacheWrite } = totals;
      expect({ input, output, cacheRead, cacheWrite }, source).toEqual(
        await packageUsage(source, file),
      );
      for (const message of withUsage(messages)) {
        expect(message.role, source).toBe("assistant");
        expect(message.metadata.gateway["model"], source).toEqual(expect.any(String));
        expect(["estimated", "reported"], source).toContain(message.cost?.kind);
      }
      // This OpenCode session states a cost of 0 for every call (its model is on a plan).
      if (source === "opencode") expect(totals.dollars, source).toBe(0);
      else expect(totals.dollars, source).toBeGreaterThan(0);
    }
  });

  it("issue 35 item 4: a Roo Code task condensed by Roo keeps the usage of the requests whose answers were condensed away, on the history's first message; the totals match the source and a package import", async () => {
    const requests = rooRequests(ROO_CONDENSED);
    expect(requests.length).toBe(59);
    const expected = sum(requests.map((request) => request.tokens));
    // Before the fix the store kept only the requests answered in the history: 226 tokens in.
    expect(expected.input).toBe(484_656);
    const { messages } = await importAndRead("cline", ROO_CONDENSED, "roo-condensed");
    const totals = usageTotals(messages);
    const { input, output, cacheRead, cacheWrite } = totals;
    expect({ input, output, cacheRead, cacheWrite }).toEqual(expected);
    expect(await packageUsage("cline", ROO_CONDENSED)).toEqual(expected);
    // Every request counted once, each cost as Roo reported it.
    const answered = withUsage(messages);
    expect(totals).toMatchObject({ calls: 59, reported: 59, estimated: 0, unknown: 0 });
    expect(totals.outside).toBe(59 - answered.length);
    expect(totals.dollars).toBeCloseTo(
      requests.reduce((dollars, request) => dollars + request.cost, 0),
      9,
    );
    // The first stored message (Roo's condensed summary, which answers no request) keeps them.
    const first = messages.find((message) => message.previous_message_id === null);
    const summary = JSON.parse(
      readFileSync(join(ROO_CONDENSED, "api_conversation_history.json"), "utf8"),
    ) as Json[];
    expect(first?.content).toEqual([{ type: "text", text: summary[1]?.["content"] }]);
    expect(first?.metadata.gateway["usage"]).toBeUndefined();
    expect(first?.metadata.gateway["callsOutsideHistory"]).toMatchObject({
      calls: totals.outside,
      reported: totals.outside,
      estimated: 0,
      unknown: 0,
    });
    expect(totals.outside).toBeGreaterThan(30);
  });

  it("issue 35 item 4: calls whose answers a compaction took out of the history, or that wrote no message, count in the store's totals as in a package (Claude Code, Gemini CLI)", async () => {
    for (const [source, file] of [
      ["claude-code", CLAUDE_COMPACTED],
      ["gemini-cli", GEMINI_EMPTY_CALLS],
    ] as const) {
      const { messages } = await importAndRead(source, file, `${source}-outside`);
      const totals = usageTotals(messages);
      expect(totals.outside, source).toBeGreaterThan(0);
      const { input, output, cacheRead, cacheWrite } = totals;
      expect({ input, output, cacheRead, cacheWrite }, source).toEqual(
        await packageUsage(source, file),
      );
      expect(totals.unknown, source).toBe(0);
      expect(totals.dollars, source).toBeGreaterThan(0);
    }
  });

  it("issue 35 item 4: a re-run whose calls outside the history changed since the first message was stored reports the difference as left out (never silently)", async () => {
    // The same task as it was before one of its condensed-away requests was written.
    const earlier = join(packages, "roo-earlier", basename(ROO_CONDENSED));
    mkdirSync(earlier, { recursive: true });
    for (const name of readdirSync(ROO_CONDENSED))
      copyFileSync(join(ROO_CONDENSED, name), join(earlier, name));
    const ui = JSON.parse(readFileSync(join(earlier, "ui_messages.json"), "utf8")) as Json[];
    const firstRequest = ui.findIndex((message) => message["say"] === "api_req_started");
    ui.splice(firstRequest, 1);
    writeFileSync(join(earlier, "ui_messages.json"), JSON.stringify(ui));
    const run = async (folder: string) => {
      const result = await db.run([
        "import",
        "cline",
        folder,
        "--into",
        db.target,
        "--subject",
        "roo-again",
        "--json",
      ]);
      expect(result.code, result.err).toBe(0);
      return JSON.parse(result.out) as {
        conversations: { outcome: string }[];
        leftOut: { what: string; reason: string }[];
      };
    };
    const outside = (report: Awaited<ReturnType<typeof run>>) =>
      report.leftOut.filter((entry) => entry.what === "usage of model calls outside the history");
    expect(outside(await run(earlier))).toEqual([]);
    const again = await run(ROO_CONDENSED);
    expect(again.conversations.map((entry) => entry.outcome)).toEqual(["unchanged"]);
    const [entry, ...more] = outside(again);
    expect(more).toEqual([]);
    expect(entry?.reason).toContain("stored by an earlier import with");
    expect(entry?.reason).toContain("never rewritten");
    // The same bytes again: what is stored matches, nothing to report.
    expect(outside(await run(earlier))).toHaveLength(0);
  });

  it("issue 31: re-running the import writes nothing and keeps each message's usage", async () => {
    for (const [source, file, subject] of [
      ["claude-code", CLAUDE, "claude-usage"],
      ["codex", CODEX, "codex-usage"],
    ] as const) {
      const before = await importAndRead(source, file, `${subject}-again`);
      const again = await importAndRead(source, file, `${subject}-again`);
      expect(again.outcomes).toEqual(["unchanged"]);
      expect(again.messages).toEqual(before.messages);
      expect(usageTotals(again.messages).calls).toBeGreaterThan(0);
    }
  });
});
