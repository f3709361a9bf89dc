import { utimesSync, writeFileSync } from "node:fs";
import { readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { atomicFileWriter, type SaveStep } from "../../packages/library/src/archive/file-writer.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { decodeConversation, decodeWholeFile } from "../../packages/library/src/format/decode.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { QUICK_DECODE_MAX_BYTES } from "../../packages/library/src/format/quick-decode.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import { conversationWith, newPackage } from "./helpers.js";

// Large conversations (docs/archive.md, "Memory"): a file above the quick decoder's limit is
// read in chunks and decoded one value at a time, which also finds whether it is canonical, and
// a large save is encoded while it is written.

/** A conversation whose file is about `megabytes` MB, with Japanese text and emoji. */
function largeConversation(megabytes: number): SavedConversation {
  const base = conversationWith();
  const count = Math.ceil((megabytes * 1e6) / 200_000);
  const text = (index: number): string =>
    `turn ${index}: ` + "デザイン card 🎨 余白\n".repeat(200_000 / 30);
  return {
    ...base,
    items: Array.from({ length: count }, (_, index) => ({
      id: `item-${index}`,
      type: "assistant" as const,
      text: `item ${index} ✨`,
    })),
    history: Array.from({ length: count }, (_, index) => ({
      role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: [{ type: "text" as const, text: text(index) }],
    })),
  };
}

async function savedLargePackage(): Promise<{ folder: string; file: string; bytes: Buffer }> {
  const folder = await newPackage();
  const { archive } = await openArchive(folder);
  await archive.save(largeConversation(10), new Map());
  const file = join(folder, "agent", "conversation.json");
  return { folder, file, bytes: await readFile(file) };
}

describe("large conversation files", () => {
  it("A2 A14 a file above the quick decoder's limit opens with the decoder's value, and an unchanged save writes nothing", async () => {
    const { folder, file, bytes } = await savedLargePackage();
    expect(bytes.length).toBeGreaterThan(QUICK_DECODE_MAX_BYTES);
    const before = await stat(file);
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    const decoded = decodeConversation(bytes);
    expect(decoded.ok && opened.conversation).toEqual(decoded.ok && decoded.conversation);
    expect(await opened.archive.save(opened.conversation, opened.images)).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
    const after = await stat(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  }, 60_000);

  it("issue 31 A2 a save made at once after openArchive writes 0 bytes and reads nothing: the open already knows the file is canonical", async () => {
    const { folder, file, bytes } = await savedLargePackage();
    expect(bytes.length).toBeGreaterThan(QUICK_DECODE_MAX_BYTES);
    // Whole seconds, so that the mtime can be put back exactly.
    await utimes(file, 1_700_000_000, 1_700_000_000);
    const before = await stat(file);
    const steps: SaveStep[] = [];
    const writer = atomicFileWriter({ onStep: (step) => steps.push(step) });
    const opened = await openArchiveWith(folder, {}, { writer });
    // Once the open has returned, the file's last message is changed in place, its size,
    // inode and mtime kept: only a save that still read the file (a check left running after
    // the open) could notice. The save writes nothing all the same.
    const changed = Buffer.from(bytes);
    const at = changed.lastIndexOf("余白");
    changed.write("余日", at);
    writeFileSync(file, changed, { flag: "r+" });
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const result = await opened.archive.save(opened.conversation, opened.images);
    expect(result).toEqual({ outcome: "unchanged", bytesWritten: 0 });
    expect(steps).toEqual([]);
    const after = await stat(file);
    expect([after.ino, after.mtimeMs, after.size]).toEqual([
      before.ino,
      before.mtimeMs,
      before.size,
    ]);
    expect((await readFile(file)).equals(changed)).toBe(true);
  }, 60_000);

  it("A14 a large unreadable file gives the whole-file decoder's reason and is kept as it is", async () => {
    const { folder, file, bytes } = await savedLargePackage();
    const text = bytes.toString("utf8");
    const middle = text.indexOf('"text" : "turn 30');
    const mutations: Record<string, Buffer> = {
      "a repeated key in an element": Buffer.from(
        text.slice(0, middle) + '"type" : "text", ' + text.slice(middle),
      ),
      truncated: bytes.subarray(0, bytes.length - 1000),
      "invalid UTF-8": Buffer.concat([
        bytes.subarray(0, middle + 20),
        Buffer.from([0xed, 0xa0, 0x80]),
        bytes.subarray(middle + 20),
      ]),
      "an unknown key in an element": Buffer.from(
        text.slice(0, middle) + '"colour" : "red", ' + text.slice(middle),
      ),
    };
    for (const [name, mutated] of Object.entries(mutations)) {
      await writeFile(file, mutated);
      const whole = decodeWholeFile(mutated);
      expect(whole.ok, name).toBe(false);
      const opened = await openArchive(folder);
      expect(
        opened.notices.map((notice) => notice.reason),
        name,
      ).toEqual([
        `agent/conversation.json cannot be read: ${whole.ok ? "" : whole.reason.message}`,
      ]);
      expect(await opened.archive.save(largeConversation(1), new Map())).toEqual({
        outcome: "kept",
        bytesWritten: 0,
      });
      expect((await readFile(file)).equals(mutated), name).toBe(true);
    }
  }, 120_000);

  it("A2 a save above the streamed-save size writes the canonical bytes and keeps no encoded copy", async () => {
    const folder = await newPackage();
    const internals = { streamedSaveBytes: 0 };
    const first = await openArchiveWith(folder, {}, internals);
    const conversation = largeConversation(0.4);
    const file = join(folder, "agent", "conversation.json");
    expect((await first.archive.save(conversation, new Map())).outcome).toBe("rewritten");
    expect(await readFile(file)).toEqual(encodeConversation(conversation));
    // Unchanged: nothing written. Changed: rewritten, canonical.
    expect(await first.archive.save(conversation, new Map())).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
    const changed = { ...conversation, model: "claude-other" };
    const result = await first.archive.save(changed, new Map());
    expect(result.outcome).toBe("rewritten");
    expect(await readFile(file)).toEqual(encodeConversation(changed));
    expect(result.bytesWritten).toBe(encodeConversation(changed).length);
    // Changed by someone else to other bytes: compared while encoding, and written again.
    await writeFile(file, encodeConversation(conversation));
    expect((await first.archive.save(changed, new Map())).outcome).toBe("rewritten");
    expect(await readFile(file)).toEqual(encodeConversation(changed));
    // Changed by someone else to the same bytes: compared, nothing written.
    await writeFile(file, encodeConversation(changed));
    expect(await first.archive.save({ ...changed }, new Map())).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
    // Reopened: the same conversation as new objects saves nothing either.
    const second = await openArchiveWith(folder, {}, internals);
    expect(await second.archive.save(structuredClone(second.conversation), new Map())).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
  }, 120_000);
});
