/**
 * A provider's server-side compaction carried across turns (issue 19, A20, A23, A26). A
 * loopback HTTP server answers the first request with a real compaction response
 * (test/fixtures/interop/providers/, SOURCES.md there) and later requests with plain text.
 *
 * - Anthropic `compaction` block: within the turn the native block goes back; when the turn
 *   ends the history takes A20's form (one user message `# Conversation so far` + the summary,
 *   then what the model wrote after the block), so every later request, and the first one after
 *   saving and reopening, carries the summary and none of what it replaced.
 * - OpenAI Responses `compaction` item (encrypted): sent back with every later request while the
 *   conversation stays open; never saved (A23): the panel records the boundary in a notice, and
 *   after reopening the next request carries the whole history.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openLiveConversation } from "../../packages/library/src/conversation/open.js";
import type { HostTool } from "../../packages/library/src/conversation/tools.js";
import { checkCachePrefix, type ProviderId } from "../../packages/library/src/providers/index.js";
import {
  bodyJson,
  startProviderServer,
  type ProviderServer,
  type WireReply,
} from "../support/provider-servers/harness.js";
import { emptyPackage, localBackend } from "../support/live-package.js";
import { writeAnthropic } from "../support/provider-servers/anthropic.js";
import { writeResponses } from "../support/provider-servers/openai-responses.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const fixtureText = (path: string) =>
  readFileSync(new URL(`../fixtures/interop/providers/${path}`, import.meta.url), "utf8");

/** The real Anthropic compaction stream, one SSE data payload per line. */
const anthropicLines = fixtureText("anthropic/compaction-iterations.chunks.txt")
  .split("\n")
  .filter((line) => line.trim() !== "");
/** The summary the stream's `compaction_delta` carries. */
const summary = anthropicLines
  .map((line) => JSON.parse(line) as { delta?: { type?: string; content?: string } })
  .filter((event) => event.delta?.type === "compaction_delta")
  .map((event) => event.delta?.content ?? "")
  .join("");

/** The same stream, ending in a tool call instead of the end of the turn. */
function withToolCall(lines: readonly string[]): string[] {
  const stop = lines.findIndex((line) => line.includes('"type":"message_delta"'));
  const call = [
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_01Look", name: "look", input: {} },
    },
    {
      type: "content_block_delta",
      index: 2,
      delta: { type: "input_json_delta", partial_json: '{"q":"x"}' },
    },
    { type: "content_block_stop", index: 2 },
  ].map((event) => JSON.stringify(event));
  return [
    ...lines.slice(0, stop),
    ...call,
    (lines[stop] ?? "").replace('"stop_reason":"end_turn"', '"stop_reason":"tool_use"'),
    ...lines.slice(stop + 1),
  ];
}

const sseOf = (lines: readonly string[]): WireReply => ({
  contentType: "text/event-stream",
  body: lines.map((line) => `data: ${line}\n\n`).join(""),
});

/** The real Responses compaction body, streamed as the events the stream parser reads. */
function responsesCompactionStream(): WireReply {
  const whole = JSON.parse(fixtureText("openai-responses/compaction.json")) as {
    output: { id?: string; type: string; content?: { text: string }[] }[];
  };
  const events: unknown[] = [
    { type: "response.created", response: { ...whole, output: [], status: "in_progress" } },
  ];
  whole.output.forEach((item, index) => {
    if (item.type === "message") {
      for (const [part, content] of (item.content ?? []).entries()) {
        events.push({
          type: "response.output_text.delta",
          item_id: item.id,
          output_index: index,
          content_index: part,
          delta: content.text,
        });
      }
    }
    events.push({ type: "response.output_item.done", output_index: index, item });
  });
  events.push({ type: "response.completed", response: whole });
  return sseOf(events.map((event) => JSON.stringify(event)));
}

/** A server whose first answers are `first` (in order), then plain text in the provider's wire format. */
async function server(provider: ProviderId, first: readonly WireReply[]): Promise<ProviderServer> {
  const started = await startProviderServer({
    basePath: provider === "anthropic" ? "" : "/v1",
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: () => true,
    write: (round, stream, model, turn) =>
      first[turn - 1] ??
      (provider === "anthropic" ? writeAnthropic : writeResponses)(round, stream, model, turn),
  });
  cleanups.push(() => started.close());
  return started;
}

const packageFolder = () => emptyPackage(cleanups, "verbatim-provider-compaction-");
const backend = localBackend;

const look: HostTool = {
  name: "look",
  description: "Looks something up.",
  inputSchema: { type: "object" },
  run: () => Promise.resolve({ content: "found" }),
};

type WireMessage = { role: string; content: { type: string; text?: string; content?: string }[] };
const messagesOf = (body: Buffer) =>
  (JSON.parse(body.toString("utf8")) as { messages: WireMessage[] }).messages;

describe("Anthropic compaction block across turns", () => {
  it("the turn's next request sends the native block back; every later request starts from the summary (A20 form), also after reopening", async () => {
    expect(summary.length).toBeGreaterThan(100);
    const pkg = await packageFolder();
    const provider = await server("anthropic", [sseOf(withToolCall(anthropicLines))]);
    const opened = await openLiveConversation(pkg, {
      backend: backend("anthropic", provider.baseUrl),
      tools: [look],
    });
    const conversation = opened.conversation;
    conversation.send("The long document and my first question");
    await conversation.whenIdle();
    // Within the turn (the tool loop), the native compaction block goes back in its place.
    expect(provider.requests).toHaveLength(2);
    const withinTurn = messagesOf(provider.requests[1]?.body ?? Buffer.alloc(0));
    expect(withinTurn[1]?.content[0]).toEqual({ type: "compaction", content: summary });

    // When the turn ends, the history is the summary, then what the model did after it.
    const history = conversation.snapshot().history;
    expect(history[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: `# Conversation so far\n${summary}` }],
    });
    expect(JSON.stringify(history)).not.toContain("The long document and my first question");
    expect(history[1]?.role).toBe("assistant");
    expect(history[1]?.content.some((block) => block.type === "toolCall")).toBe(true);
    expect(conversation.snapshot().sentFacts).toEqual([{ message: 0 }]);
    const notices = conversation
      .snapshot()
      .items.filter((item) => item.type === "notice" && item.kind === "compacted");
    expect(notices).toHaveLength(1);

    // The next two turns both start from the summary; the second extends the first.
    conversation.send("Second question");
    await conversation.whenIdle();
    conversation.send("Third question");
    await conversation.whenIdle();
    expect(provider.requests).toHaveLength(4);
    for (const request of provider.requests.slice(2)) {
      const messages = messagesOf(request.body);
      expect(messages[0]?.content[0]).toMatchObject({
        type: "text",
        text: `# Conversation so far\n${summary}`,
      });
      const body = request.body.toString("utf8");
      expect(body).not.toContain("The long document and my first question");
      expect(body).not.toContain('"type":"compaction"');
    }
    expect(
      checkCachePrefix(
        provider.requests[2]?.body.toString("utf8") ?? "",
        provider.requests[3]?.body.toString("utf8") ?? "",
      ),
    ).toMatchObject({ ok: true });

    // Saved and reopened: the next request is byte for byte the one the open conversation sends.
    await opened.save();
    const reopened = await openLiveConversation(pkg, {
      backend: backend("anthropic", provider.baseUrl),
      tools: [look],
    });
    expect(reopened.conversation.snapshot().history).toEqual(conversation.snapshot().history);
    conversation.send("Fourth question");
    await conversation.whenIdle();
    reopened.conversation.send("Fourth question");
    await reopened.conversation.whenIdle();
    expect(provider.requests).toHaveLength(6);
    expect(provider.requests[5]?.body.toString("utf8")).toBe(
      provider.requests[4]?.body.toString("utf8"),
    );
  });

  it("a compaction in a turn's only round (no tool call) also leaves the summary for the next turns", async () => {
    const pkg = await packageFolder();
    const provider = await server("anthropic", [sseOf(anthropicLines)]);
    const opened = await openLiveConversation(pkg, {
      backend: backend("anthropic", provider.baseUrl),
    });
    opened.conversation.send("First question");
    await opened.conversation.whenIdle();
    // The compacting request's usage counts in the totals, not as the context's fill.
    expect(opened.conversation.snapshot().usage.input).toBeGreaterThan(60000);
    expect(opened.conversation.snapshot().lastRoundUsage).toBeUndefined();
    opened.conversation.send("Second question");
    await opened.conversation.whenIdle();
    const messages = messagesOf(provider.requests[1]?.body ?? Buffer.alloc(0));
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[0]?.content[0]?.text).toBe(`# Conversation so far\n${summary}`);
    expect(messages[1]?.content.map((block) => block.type)).toEqual(["text"]);
    expect(messages[1]?.content[0]?.text).toMatch(/section\?$/);
  });
});

describe("OpenAI Responses compaction item across turns", () => {
  type Input = { type?: string; role?: string; encrypted_content?: string }[];
  const inputOf = (body: Buffer) => (JSON.parse(body.toString("utf8")) as { input: Input }).input;

  it("the encrypted item goes back with every later request while open; saved, a notice records the boundary and the next request carries the whole history", async () => {
    const raw = JSON.parse(fixtureText("openai-responses/compaction.json")) as {
      output: { type: string; encrypted_content?: string }[];
    };
    const item = raw.output.find((entry) => entry.type === "compaction");
    const pkg = await packageFolder();
    const provider = await server("openai-responses", [responsesCompactionStream()]);
    const opened = await openLiveConversation(pkg, {
      backend: backend("openai-responses", provider.baseUrl),
    });
    const conversation = opened.conversation;
    conversation.send("Testing strategies?");
    await conversation.whenIdle();
    conversation.send("And for the database layer?");
    await conversation.whenIdle();
    conversation.send("Thanks");
    await conversation.whenIdle();
    expect(provider.requests).toHaveLength(3);
    for (const request of provider.requests.slice(1)) {
      const compactions = inputOf(request.body).filter((entry) => entry.type === "compaction");
      expect(compactions).toEqual([item]);
    }
    const notice = conversation
      .snapshot()
      .items.find((entry) => entry.type === "notice" && entry.kind === "compacted");
    expect(notice?.type === "notice" ? notice.text : "").toMatch(/encrypted/);

    await opened.save();
    const reopened = await openLiveConversation(pkg, {
      backend: backend("openai-responses", provider.baseUrl),
    });
    expect(
      reopened.conversation
        .snapshot()
        .items.some((entry) => entry.type === "notice" && entry.kind === "compacted"),
    ).toBe(true);
    reopened.conversation.send("Once more");
    await reopened.conversation.whenIdle();
    const afterReopen = inputOf(provider.requests[3]?.body ?? Buffer.alloc(0));
    expect(afterReopen.some((entry) => entry.type === "compaction")).toBe(false);
    expect(afterReopen.filter((entry) => entry.role === "user")).toHaveLength(4);
  });
});
