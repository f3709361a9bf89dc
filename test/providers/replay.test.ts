/**
 * Byte-exact replay (A26), the cache prefix across requests (A27) and continuation on another
 * provider (A24), for every provider, end to end: an 11-turn conversation runs against a local
 * HTTP server speaking the provider's wire format (test/support/provider-servers/, laid out
 * after the captured bodies of test/fixtures/providers/), its history built from what that
 * server streamed back. It is saved with the archive and reopened in a fresh process; the next
 * request's bytes as they arrive at the server are compared with those the never-closed
 * conversation sends.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { emptyConversation } from "../../packages/library/src/format/index.js";
import {
  toolCallArgumentText,
  toolResultText,
  type Message,
} from "../../packages/library/src/history/index.js";
import { IMAGE_OMITTED_TEXT } from "../../packages/library/src/internal/index.js";
import {
  PROVIDER_IDS,
  checkCachePrefix,
  renderRequest,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import { startLocalProvider, type ProviderServer } from "../support/provider-servers/index.js";
import { ReplayConversation, runScriptedConversation } from "../support/replay-driver.js";
import { NEXT_USER_TEXT, REPLAY_MODELS, replayOptions } from "../support/replay-options.js";

const run = promisify(execFile);
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

async function savePackage(conversation: ReplayConversation): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "verbatim-replay-"));
  folders.push(folder);
  const opened = await openArchive(folder);
  await opened.archive.save(
    {
      ...emptyConversation(),
      provider: conversation.provider,
      model: REPLAY_MODELS[conversation.provider],
      history: conversation.history,
      sentFacts: conversation.turnStarts.map((message) => ({ message })),
    },
    conversation.images,
  );
  return folder;
}

const conversations = new Map<ProviderId, ReplayConversation>();

describe.each(PROVIDER_IDS)("%s", (provider) => {
  let server: ProviderServer;
  afterAll(async () => server?.close());

  it(`A26 ${provider}: the request bytes after saving and reopening in a fresh process equal the never-closed conversation's`, async () => {
    server = await startLocalProvider(provider);
    const conversation = new ReplayConversation(provider, server);
    await runScriptedConversation(conversation);
    conversations.set(provider, conversation);
    expect(conversation.turnStarts.length).toBeGreaterThanOrEqual(10);

    // What arrived on the wire is exactly what was rendered.
    expect(server.requests.map((request) => request.body.toString("utf8"))).toEqual(
      conversation.sent.map((sent) => sent.body),
    );
    // The conversation holds what the scenario needs.
    const blocks = conversation.history.flatMap((message) => message.content);
    expect(blocks.some((block) => block.type === "toolResult" && block.isError)).toBe(true);
    expect(blocks.some((block) => block.type === "toolResult" && "contentBase64" in block)).toBe(
      true,
    );
    expect(blocks.filter((block) => block.type === "image").length).toBe(4);
    expect(JSON.stringify(conversation.history)).toContain("完了しました 👍");

    const folder = await savePackage(conversation);

    // The never-closed conversation sends its next request.
    const saved = conversation.history.length;
    conversation.history.push({ role: "user", content: [{ type: "text", text: NEXT_USER_TEXT }] });
    conversation.signed = [];
    server.script.push({ text: "ok" });
    const body = conversation.render(saved);
    await conversation.send(body);
    const neverClosed = server.requests[server.requests.length - 1]!.body;
    conversation.history.pop();

    // A fresh process opens the package and sends its next request.
    server.script.push({ text: "ok" });
    const child = await run(
      process.execPath,
      ["bin/run-ts.js", "test/support/replay-next-request.ts", folder, provider, server.baseUrl],
      {
        cwd: process.cwd(),
      },
    );
    expect(child.stdout).toBe("sent\n");
    const reopened = server.requests[server.requests.length - 1]!.body;
    expect(server.requests.length).toBe(conversation.sent.length + 2);
    expect(reopened.equals(neverClosed)).toBe(true);
    expect(reopened.toString("utf8")).toBe(body);
  });

  it(`A27 ${provider}: every request extends the one before (the turn's signed material left out at a turn's start)`, () => {
    const conversation = conversations.get(provider);
    expect(conversation).toBeDefined();
    const sent = conversation!.sent;
    let turnStartsWithSignedMaterial = 0;
    for (let index = 1; index < sent.length; index++) {
      const before = sent[index - 1]!;
      const after = sent[index]!;
      if (!after.firstOfTurn) {
        expect(checkCachePrefix(before.body, after.body), `request ${index}`).toMatchObject({
          ok: true,
        });
        continue;
      }
      const strict = checkCachePrefix(before.body, after.body);
      if (!strict.ok) turnStartsWithSignedMaterial++;
      expect(
        checkCachePrefix(before.body, after.body, { ignoreSignedMaterial: true }),
        `request ${index}`,
      ).toMatchObject({ ok: true });
    }
    // Thinking (Anthropic, OpenAI Responses, OpenRouter) or thought signatures (Gemini) were
    // sent within their turn and left out of the next turn's first request.
    // OpenAI Chat has no signed material: there every request extends the previous one as is.
    if (provider === "openai-chat") expect(turnStartsWithSignedMaterial).toBe(0);
    else expect(turnStartsWithSignedMaterial).toBeGreaterThan(0);
  });
});

/** The texts a body must carry for a history, in order (A24). */
function expectedPieces(history: readonly Message[]): string[] {
  const pieces: string[] = [];
  for (const message of history) {
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          pieces.push(block.text);
          break;
        case "image":
          pieces.push(block.mimeType);
          break;
        case "imageOmitted":
          pieces.push(IMAGE_OMITTED_TEXT);
          break;
        case "toolCall":
          pieces.push(block.id, block.name);
          break;
        case "toolResult":
          pieces.push(block.callID, toolResultText(block));
          break;
      }
    }
  }
  return pieces;
}

describe("A24 continuation on another provider", () => {
  it("A24 a conversation saved with Anthropic continues on every other provider with every block, in order", async () => {
    const source = conversations.get("anthropic");
    expect(source).toBeDefined();
    const folder = await savePackage(source!);
    const opened = await openArchive(folder);
    const history: Message[] = [
      ...opened.conversation.history,
      { role: "user", content: [{ type: "text", text: NEXT_USER_TEXT }] },
    ];
    for (const provider of PROVIDER_IDS) {
      const { body } = renderRequest(provider, {
        history,
        images: (sha256) => opened.images.get(sha256),
        options: replayOptions(provider, history.length - 1),
      });
      const decoded = JSON.parse(body) as unknown;
      const flat = JSON.stringify(decoded);
      let position = 0;
      for (const piece of expectedPieces(history)) {
        const found = flat.indexOf(JSON.stringify(piece).slice(1, -1), position);
        expect(found, `${provider}: ${piece}`).toBeGreaterThanOrEqual(0);
        position = found;
      }
      // Every tool call's arguments travel: as their text, or as the object they spell.
      for (const block of history.flatMap((message) => message.content)) {
        if (block.type !== "toolCall") continue;
        const text = toolCallArgumentText(block);
        const asObject = JSON.stringify(JSON.parse(text));
        expect(flat.includes(JSON.stringify(text).slice(1, -1)) || flat.includes(asObject)).toBe(
          true,
        );
      }
      // The other provider's server accepts the continuation and the turn goes on.
      const server = await startLocalProvider(provider);
      try {
        const next = new ReplayConversation(provider, server);
        next.history.push(...history);
        for (const [sha, bytes] of opened.images) next.images.set(sha, bytes);
        const result = await next.send(body);
        expect(result.message.content).toEqual([{ type: "text", text: "ok" }]);
        expect(server.requests[0]!.body.toString("utf8")).toBe(body);
      } finally {
        await server.close();
      }
    }
  });
});
