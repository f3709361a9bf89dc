/**
 * An imported compaction is carried across turns (issue 19): a Claude Code session with a
 * `compact_boundary` and a Codex rollout with a `compacted` line, imported into a package (the
 * real corpus, test/fixtures/interop/SOURCES.md), continue from the compaction's summary or
 * replacement history on every later request, never from what it replaced. A loopback server
 * in the provider's wire format receives the requests.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openLiveConversation } from "../../packages/library/src/conversation/open.js";
import { importClaudeCodeFile } from "../../packages/library/src/interop/claude-code/import.js";
import { importCodexRollout } from "../../packages/library/src/interop/codex/import.js";
import { writeImportedPackage, type FileImport } from "../../packages/library/src/interop/index.js";
import { checkCachePrefix, type ProviderId } from "../../packages/library/src/providers/index.js";
import { startLocalProvider, type ProviderServer } from "../support/provider-servers/index.js";
import { localBackend } from "../support/live-package.js";
import { fixturesRoot } from "./fixture-files.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Imports into a package, reopens it on a local provider and runs two more turns. */
async function twoTurnsAfterImport(
  imported: FileImport,
  provider: ProviderId,
): Promise<{ requests: string[]; server: ProviderServer; firstText: string }> {
  const into = await mkdtemp(join(tmpdir(), "verbatim-import-compaction-"));
  cleanups.push(() => rm(into, { recursive: true, force: true }));
  const conversation = imported.conversations[0];
  if (conversation === undefined) throw new Error("the file imported no conversation");
  const written = await writeImportedPackage(into, conversation);
  expect(written.outcome).toBe("imported");
  const server = await startLocalProvider(provider);
  cleanups.push(() => server.close());
  const opened = await openLiveConversation(written.path, {
    backend: localBackend(provider, server.baseUrl),
  });
  const first = opened.conversation.snapshot().history[0]?.content[0];
  opened.conversation.send("Go on");
  await opened.conversation.whenIdle();
  opened.conversation.send("And the tests?");
  await opened.conversation.whenIdle();
  return {
    requests: server.requests.map((request) => request.body.toString("utf8")),
    server,
    firstText: first?.type === "text" ? first.text : "",
  };
}

describe("an imported compaction holds on every later request", () => {
  it("Claude Code compact_boundary: both next requests start from the compact summary, none holds what it replaced", async () => {
    const file = join(
      fixturesRoot,
      "claude-code/2.1-real/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    );
    const { requests, firstText } = await twoTurnsAfterImport(
      importClaudeCodeFile(file, readFileSync(file)),
      "anthropic",
    );
    expect(firstText).toMatch(/^This session is being continued from a previous conversation/);
    expect(requests).toHaveLength(2);
    // A tool call made before the boundary (line 12 of the file) is in neither request.
    for (const body of requests) {
      const messages = (JSON.parse(body) as { messages: { content: { text?: string }[] }[] })
        .messages;
      expect(messages[0]?.content[0]?.text).toBe(firstText);
      expect(body).not.toContain("toolu_01PR2QJsrUy1AH2X9R5XNDQn");
    }
    expect(checkCachePrefix(requests[0] ?? "", requests[1] ?? "")).toMatchObject({ ok: true });
  });

  it("Codex compacted: both next requests start from the replacement history, none holds what it replaced", async () => {
    const file = join(
      fixturesRoot,
      "codex/0.104-sanitized/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    );
    const { requests, firstText } = await twoTurnsAfterImport(
      importCodexRollout(file, readFileSync(file)),
      "openai-responses",
    );
    expect(firstText.length).toBeGreaterThan(0);
    expect(requests).toHaveLength(2);
    for (const body of requests) {
      expect(body).toContain(JSON.stringify(firstText));
      // A call made before the compaction (line 17 of the rollout) is in neither request.
      expect(body).not.toContain("call_nVfP8tNvbBQOZK5JbFpuAPUZ");
    }
    expect(checkCachePrefix(requests[0] ?? "", requests[1] ?? "")).toMatchObject({ ok: true });
  });
});
