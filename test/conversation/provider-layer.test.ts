/**
 * The live conversation over the real provider layer (render → HTTP → stream parse), against
 * the local Anthropic Messages server of test/support/provider-servers (its event layout follows
 * the captured stream test/fixtures/providers/anthropic/tool-stream.sse).
 */
import { execFile } from "node:child_process";
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createLiveConversation } from "../../packages/library/src/conversation/live-conversation.js";
import { openLiveConversation } from "../../packages/library/src/conversation/open.js";
import { providerBackend } from "../../packages/library/src/conversation/provider-backend.js";
import { checkCachePrefix } from "../../packages/library/src/providers/index.js";
import { startLocalProvider, type ProviderServer } from "../support/provider-servers/index.js";
import { echoTool } from "../support/conversation-fixtures.js";
import { CHILD_SYSTEM, childSections } from "../support/conversation-child.js";

const run = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function server(): Promise<ProviderServer> {
  const started = await startLocalProvider("anthropic");
  cleanups.push(() => started.close());
  return started;
}

async function packageFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "verbatim-provider-layer-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const pkg = join(dir, "Poster.pkg");
  await mkdir(pkg);
  return pkg;
}

function anthropic(baseUrl: string) {
  return providerBackend({
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    transport: { baseUrl, apiKey: "sk-ant-local", maxRetries: 0 },
  });
}

const firstTurn = [
  {
    thinking: "The user wants an echo.",
    text: "Echoing.",
    toolCalls: [{ id: "toolu_01A", name: "echo", arguments: '{"text":"héllo ✓"}' }],
    usage: { input: 1200, output: 40, cacheWrite: 900 },
  },
  { text: "Done: héllo ✓", usage: { input: 20, output: 10, cacheRead: 2100 } },
];

describe("the live conversation over the provider layer", () => {
  it("A26 reopened in a fresh process, the next request carries the same sections and the same bytes as a conversation that stayed open", async () => {
    const pkg = await packageFolder();
    const local = await server();
    local.script.push(...firstTurn, { text: "Second answer." });
    const opened = await openLiveConversation(pkg, {
      backend: anthropic(local.baseUrl),
      system: CHILD_SYSTEM,
      sections: childSections,
      tools: [echoTool],
    });
    opened.conversation.send("Echo héllo ✓");
    await opened.conversation.whenIdle();
    await opened.save();
    expect(local.requests).toHaveLength(2);
    // Thinking is shown in the panel, never stored in history (A23); cost comes from the table.
    const afterFirst = opened.conversation.snapshot();
    expect(afterFirst.items.map((item) => item.type)).toEqual([
      "user",
      "thinking",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(JSON.stringify(afterFirst.history)).not.toContain("The user wants an echo.");
    expect(afterFirst.usage).toMatchObject({
      input: 1220,
      output: 50,
      cacheRead: 2100,
      cacheWrite: 900,
    });
    expect(afterFirst.estimatedCost.kind).toBe("estimated");
    // The conversation that stays open sends its second turn here.
    opened.conversation.send("Now the second page");
    await opened.conversation.whenIdle();
    const stayedOpen = local.requests[2]?.body;
    // The thinking signature goes back within its turn only (kept in memory, never saved).
    expect(local.requests[1]?.body.toString("utf8")).toMatch(
      /"signature":"EqQBCkgIARABGAIiQL\d+signature"/,
    );
    expect(stayedOpen?.toString("utf8")).not.toContain('"signature"');

    // A fresh process opens the package saved after the first turn and sends the same message.
    const reopenedPkg = await packageFolder();
    const first = await server();
    first.script.push(...firstTurn);
    const again = await openLiveConversation(reopenedPkg, {
      backend: anthropic(first.baseUrl),
      system: CHILD_SYSTEM,
      sections: childSections,
      tools: [echoTool],
    });
    again.conversation.send("Echo héllo ✓");
    await again.conversation.whenIdle();
    await again.save();
    const child = await server();
    child.script.push({ text: "Second answer." });
    await run(process.execPath, [
      "bin/run-ts.js",
      "test/support/conversation-child.ts",
      reopenedPkg,
      child.baseUrl,
      "Now the second page",
    ]);
    expect(child.requests).toHaveLength(1);
    const reopened = child.requests[0]?.body;
    expect(reopened?.toString("utf8")).toBe(stayedOpen?.toString("utf8"));
    expect(Buffer.compare(reopened ?? Buffer.alloc(0), stayedOpen ?? Buffer.alloc(1))).toBe(0);
    // The sections went with the first turn's message only, never into the system prompt.
    const body = JSON.parse(reopened?.toString("utf8") ?? "{}") as {
      system: unknown;
      messages: { content: { type: string; text?: string }[] }[];
    };
    expect(JSON.stringify(body.system)).not.toContain("Colours");
    expect(body.messages[0]?.content[0]?.text).toBe(
      "# Design system\nColours: red, black.\nFont: Inter.",
    );
    expect(JSON.stringify(body.messages.at(-1))).not.toContain("# Document");
    // And the request extends the previous one: the cached prefix holds (A27).
    const previous = local.requests[1]?.body.toString("utf8") ?? "";
    expect(
      checkCachePrefix(previous, reopened?.toString("utf8") ?? "", { ignoreSignedMaterial: true }),
    ).toMatchObject({ ok: true });
  }, 60_000);

  it("A27 the request after compaction misses the cache exactly once; the one after it extends it", async () => {
    const local = await server();
    local.script.push(
      { text: "one", usage: { input: 500, output: 5 } },
      { text: "two", usage: { input: 600, output: 5 } },
      { text: "three", usage: { input: 700, output: 5 } },
      { text: "The user said one, two.", usage: { input: 300, output: 20 } },
      { text: "four", usage: { input: 200, output: 5 } },
      { text: "five", usage: { input: 250, output: 5 } },
    );
    const conversation = createLiveConversation({
      backend: anthropic(local.baseUrl),
      system: "Be brief.",
      sections: () => [{ name: "Document", content: "A poster." }],
    });
    for (const text of ["one", "two", "three"]) {
      conversation.send(text);
      await conversation.whenIdle();
    }
    expect(await conversation.compact()).toMatchObject({ ok: true });
    for (const text of ["four", "five"]) {
      conversation.send(text);
      await conversation.whenIdle();
    }
    const bodies = local.requests.map((request) => request.body.toString("utf8"));
    expect(bodies).toHaveLength(6);
    const turnRequests = [bodies[0], bodies[1], bodies[2], bodies[4], bodies[5]] as string[];
    const extends_ = turnRequests
      .slice(1)
      .map((body, index) => checkCachePrefix(turnRequests[index] ?? "", body).ok);
    expect(extends_).toEqual([true, true, false, true]);
    // After compaction the next turn resends the section whole.
    const afterCompaction = JSON.parse(bodies[4] ?? "{}") as {
      messages: { content: { text?: string }[] }[];
    };
    expect(afterCompaction.messages[0]?.content[0]?.text).toMatch(
      /^# Conversation so far\nThe user said one, two\./,
    );
    expect(JSON.stringify(afterCompaction.messages.at(-1))).toContain("# Document\\nA poster.");
  }, 60_000);
});
