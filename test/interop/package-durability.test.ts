import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { openArchive } from "../../packages/library/src/archive/archive.js";
import { FolderSyncBatch } from "../../packages/library/src/archive/folder-sync-batch.js";
import { importIntoPackages } from "../../packages/library/src/interop/index.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import { fixtureFiles } from "./fixture-files.js";
import { conversationWith, imagesOf, testImage } from "../archive/helpers.js";

// Issue 19: an import of many sessions into packages fsyncs each file before renaming it, and
// the folders' fsyncs all together at the end (FolderSyncBatch), durable when it returns.

const folder = mkdtempSync(join(tmpdir(), "verbatim-package-durability-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

async function someConversation(): Promise<SavedConversation> {
  const source = join(folder, "source");
  mkdirSync(source, { recursive: true });
  const files = fixtureFiles("codex", ".jsonl");
  const report = await importIntoPackages({
    source: "codex",
    files: files.slice(0, 1),
    into: source,
  });
  const path = report.conversations[0]?.path ?? "";
  return (await openArchive(path)).conversation;
}

describe("FolderSyncBatch (issue 19)", () => {
  it("records a save's folder fsyncs instead of doing them; the files are complete before the flush", async () => {
    const conversation = await someConversation();
    const path = join(folder, "batched");
    mkdirSync(path);
    const batch = new FolderSyncBatch();
    const opened = await openArchive(path, { folderSyncs: batch });
    await opened.archive.save(conversation, new Map());
    // The package folder (agent/ is new in it) and agent/ (conversation.json renamed in it), by
    // their own paths, not through a descriptor that is closed after the save.
    expect(new Set(batch.waiting)).toEqual(new Set([path, join(path, "agent")]));
    // The file was written whole and renamed: it reads back before any flush.
    expect((await openArchive(path)).conversation).toEqual(conversation);
    await batch.flush();
    expect(batch.waiting).toEqual([]);
  });

  it("a save that deletes images fsyncs its folder at once: the deletion waits for the new conversation to be durable", async () => {
    const path = join(folder, "deleting");
    mkdirSync(path);
    const png = testImage(1000, 19);
    const batch = new FolderSyncBatch();
    const opened = await openArchive(path, { folderSyncs: batch });
    await opened.archive.save(conversationWith([png.block]), imagesOf(png));
    expect(new Set(batch.waiting)).toEqual(new Set([path, join(path, "agent")]));
    await batch.flush();
    // The image is dropped: agent/ is fsynced before it is deleted, nothing is left waiting.
    const result = await opened.archive.save(conversationWith([]), new Map());
    expect(result.outcome).toBe("rewritten");
    expect(batch.waiting).toEqual([]);
    // Without a deletion, the last fsync waits again.
    await opened.archive.save(conversationWith([], []), new Map());
    expect(batch.waiting).toEqual([join(path, "agent")]);
  });

  it("reports a folder it could not fsync", async () => {
    const batch = new FolderSyncBatch();
    batch.add(join(folder, "never-created"));
    await expect(batch.flush()).rejects.toMatchObject({ code: "ENOENT" });
    expect(batch.waiting).toEqual([]);
  });

  it("an import into packages records every folder it changed and flushes them once, before it returns", async () => {
    const into = join(folder, "imports", "nested");
    const flushed: (readonly string[])[] = [];
    const original = FolderSyncBatch.prototype.flush;
    const flush = vi.spyOn(FolderSyncBatch.prototype, "flush").mockImplementation(async function (
      this: FolderSyncBatch,
    ) {
      flushed.push(this.waiting);
      await original.call(this);
    });
    const files = fixtureFiles("codex", ".jsonl");
    const report = await importIntoPackages({ source: "codex", files, into });
    expect(report.totals.imported).toBeGreaterThan(1);
    expect(flush).toHaveBeenCalledTimes(1);
    const recorded = new Set(flushed[0]);
    // The folders created for `into` (their parents hold the new entries) and every package.
    expect(recorded).toContain(folder);
    expect(recorded).toContain(join(folder, "imports"));
    expect(recorded).toContain(into);
    for (const conversation of report.conversations) {
      expect(recorded).toContain(conversation.path);
      expect(recorded).toContain(join(conversation.path, "agent"));
      expect(
        readFileSync(join(conversation.path, "agent", "conversation.json")).length,
      ).toBeGreaterThan(0);
    }
  });
});
