import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { ConversationEncoder } from "../../packages/library/src/archive/encoder.js";
import { atomicFileWriter, type SaveStep } from "../../packages/library/src/archive/file-writer.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import { conversationWith, imagesOf, newPackage, testImage } from "./helpers.js";

// The goal "Unchanged re-save after reopening": the archive knows that what it read is the
// canonical encoding of what it returned, so saving that conversation writes nothing.

async function savedPackage() {
  const folder = await newPackage();
  const image = testImage(400, 81);
  const conversation = conversationWith([image.block], [], [image.block]);
  const { archive } = await openArchive(folder);
  await archive.save(conversation, imagesOf(image));
  return { folder, image, conversation };
}

describe("unchanged re-save after reopening", () => {
  it("A2 a save right after opening encodes nothing, writes 0 bytes, takes no file-system step and leaves the file's inode and mtime", async () => {
    const { folder } = await savedPackage();
    const file = join(folder, "agent", "conversation.json");
    const before = await stat(file);
    const steps: SaveStep[] = [];
    const writer = atomicFileWriter({ onStep: (step) => steps.push(step) });
    const opened = await openArchiveWith(folder, {}, { writer });
    expect(opened.notices).toEqual([]);
    const encode = vi.spyOn(ConversationEncoder.prototype, "encode");
    for (let round = 0; round < 3; round++) {
      expect(await opened.archive.save(opened.conversation, opened.images)).toEqual({
        outcome: "unchanged",
        bytesWritten: 0,
      });
    }
    expect(steps).toEqual([]);
    expect(encode).not.toHaveBeenCalled();
    encode.mockRestore();
    const after = await stat(file);
    expect([after.ino, after.mtimeMs, after.size]).toEqual([
      before.ino,
      before.mtimeMs,
      before.size,
    ]);
  });

  it("A2 a real change after reopening is still saved, and the next unchanged save writes nothing", async () => {
    const { folder, image } = await savedPackage();
    const opened = await openArchive(folder);
    const conversation = opened.conversation;
    const changed = {
      ...conversation,
      history: [...conversation.history, { role: "assistant" as const, content: [] }],
    };
    const other = testImage(300, 82);
    const grown = conversationWith([image.block], [], [image.block], [other.block]);
    const first = await opened.archive.save(changed, opened.images);
    expect(first.outcome).toBe("rewritten");
    expect(await readFile(join(folder, "agent", "conversation.json"))).toEqual(
      encodeConversation(changed),
    );
    const second = await opened.archive.save(grown, imagesOf(image, other));
    expect(second.outcome).toBe("rewritten");
    expect(second.bytesWritten).toBe(encodeConversation(grown).length + other.bytes.length);
    expect(await opened.archive.save(grown, imagesOf(image, other))).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
    const reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(grown);
  });

  it("A2 a small top-level value changed in place after reopening is saved", async () => {
    const { folder } = await savedPackage();
    const opened = await openArchive(folder);
    const conversation = { ...opened.conversation, model: "claude-other" };
    expect((await opened.archive.save(conversation, opened.images)).outcome).toBe("rewritten");
    expect((await openArchive(folder)).conversation.model).toBe("claude-other");
  });

  it("A2 a file another program laid out differently is made canonical by the first save", async () => {
    const { folder, conversation } = await savedPackage();
    const file = join(folder, "agent", "conversation.json");
    const canonical = await readFile(file);
    await writeFile(file, JSON.stringify(JSON.parse(canonical.toString("utf8"))));
    const opened = await openArchive(folder);
    expect(opened.conversation).toEqual(conversation);
    const result = await opened.archive.save(opened.conversation, opened.images);
    expect(result).toEqual({ outcome: "rewritten", bytesWritten: canonical.length });
    expect(await readFile(file)).toEqual(canonical);
  });

  it("A15 after reopening with an image file missing, the first save writes the imageOmitted block", async () => {
    const { folder, image } = await savedPackage();
    const { rm } = await import("node:fs/promises");
    await rm(join(folder, "agent", "images", `${image.sha256}.png`));
    const opened = await openArchive(folder);
    const result = await opened.archive.save(opened.conversation, opened.images);
    expect(result.outcome).toBe("rewritten");
    expect(await readFile(join(folder, "agent", "conversation.json"), "utf8")).toContain(
      "imageOmitted",
    );
  });
});
