import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { atomicFileWriter, type SaveStep } from "../../packages/library/src/archive/file-writer.js";
import { openArchive, type ArchiveSettings } from "../../packages/library/src/archive/index.js";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import {
  conversationWith,
  exists,
  imagesOf,
  newPackage,
  seedPackage,
  snapshotTree,
  testImage,
} from "./helpers.js";

function switchable(keepConversation: boolean): {
  settings: () => ArchiveSettings;
  set(value: boolean): void;
} {
  let value = keepConversation;
  return { settings: () => ({ keepConversation: value }), set: (next) => (value = next) };
}

describe("A17 the keep-conversation setting", () => {
  it("A17 on by default", async () => {
    const folder = await newPackage();
    const image = testImage(100, 60);
    const { archive } = await openArchive(folder);
    expect((await archive.save(conversationWith([image.block]), imagesOf(image))).outcome).toBe(
      "rewritten",
    );
  });

  it("A17 off: nothing is written", async () => {
    const folder = await newPackage();
    const { archive } = await openArchive(folder, {
      settings: () => ({ keepConversation: false }),
    });
    const image = testImage(100, 61);
    expect(await archive.save(conversationWith([image.block]), imagesOf(image))).toEqual({
      outcome: "skipped",
      bytesWritten: 0,
    });
    expect(await exists(join(folder, "agent"))).toBe(false);
  });

  it("A17 off: conversation changes do not mark the document edited (A5 hook)", async () => {
    const folder = await newPackage();
    const setting = switchable(true);
    let edits = 0;
    const { archive } = await openArchive(folder, {
      settings: setting.settings,
      onChangedWithoutUndo: () => edits++,
    });
    archive.changedWithoutUndo();
    expect(edits).toBe(1);
    setting.set(false);
    archive.changedWithoutUndo();
    expect(edits).toBe(1);
  });

  it("A17 off: opening a package with agent/ restores nothing", async () => {
    const folder = await seedPackage();
    const before = await snapshotTree(folder);
    const opened = await openArchive(folder, { settings: () => ({ keepConversation: false }) });
    expect(opened.conversation).toEqual(emptyConversation());
    expect(opened.notices).toEqual([]);
    expect(await snapshotTree(folder)).toEqual(before);
  });

  it("A17 off: an open document's agent/ is deleted at its next save (read at every save)", async () => {
    const folder = await seedPackage();
    const setting = switchable(true);
    const opened = await openArchive(folder, { settings: setting.settings });
    expect(opened.conversation.history).toHaveLength(5);
    setting.set(false);
    expect(await opened.archive.save(opened.conversation, opened.images)).toEqual({
      outcome: "removed",
      bytesWritten: 0,
    });
    expect(await exists(join(folder, "agent"))).toBe(false);
    expect(await exists(join(folder, "document.json"))).toBe(true);
    setting.set(true);
    expect((await opened.archive.save(opened.conversation, opened.images)).outcome).toBe(
      "rewritten",
    );
  });

  it("A17 off: the next save removes agent/ even in the A14 case", async () => {
    const folder = await newPackage();
    await mkdir(join(folder, "agent"));
    await writeFile(join(folder, "agent", "conversation.json"), '{"formatVersion" : 2}');
    const setting = switchable(true);
    const opened = await openArchive(folder, { settings: setting.settings });
    expect(opened.archive.preservingUnreadable).toBe(true);
    expect((await opened.archive.save(opened.conversation, opened.images)).outcome).toBe("kept");
    setting.set(false);
    expect((await opened.archive.save(opened.conversation, opened.images)).outcome).toBe("removed");
    expect(await exists(join(folder, "agent"))).toBe(false);
  });
});

describe("A5 the no-undo change hook", () => {
  it("A5 opening never fires the hook; changedWithoutUndo does", async () => {
    let edits = 0;
    const onChangedWithoutUndo = (): void => {
      edits++;
    };
    const folder = await seedPackage();
    const opened = await openArchive(folder, { onChangedWithoutUndo });
    await openArchive(await newPackage(), { onChangedWithoutUndo });
    expect(edits).toBe(0);
    await opened.archive.save(opened.conversation, opened.images);
    expect(edits).toBe(0);
    opened.archive.changedWithoutUndo();
    expect(edits).toBe(1);
  });

  it("A4 A5 a template's conversation changes do not mark it edited", async () => {
    let edits = 0;
    const { archive } = await openArchive(await newPackage(), {
      kind: "template",
      onChangedWithoutUndo: () => edits++,
    });
    archive.changedWithoutUndo();
    expect(edits).toBe(0);
  });
});

describe("A14 lifecycle of agent/", () => {
  it("A14 removing agent/ deletes conversation.json first", async () => {
    const folder = await newPackage();
    const steps: [SaveStep, string][] = [];
    const writer = atomicFileWriter({ onStep: (step, path) => steps.push([step, path]) });
    const { archive } = await openArchiveWith(folder, {}, { writer });
    const image = testImage(100, 62);
    await archive.save(conversationWith([image.block]), imagesOf(image));
    steps.length = 0;
    await archive.save(emptyConversation(), new Map());
    const removals = steps.filter(([step]) => step === "removeFile" || step === "removeFolder");
    expect(removals[0]).toEqual(["removeFile", join(folder, "agent", "conversation.json")]);
    expect(removals.map(([step]) => step)).toEqual([
      "removeFile",
      "removeFile",
      "removeFolder",
      "removeFolder",
    ]);
  });

  it("A13 A14 an interrupted removal (agent/ without conversation.json) opens empty without a notice, and the next save finishes it", async () => {
    const folder = await seedPackage();
    const { rm } = await import("node:fs/promises");
    await rm(join(folder, "agent", "conversation.json"));
    await mkdir(join(folder, "agent", "images"));
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation).toEqual(emptyConversation());
    expect((await opened.archive.save(opened.conversation, opened.images)).outcome).toBe("removed");
    expect(await exists(join(folder, "agent"))).toBe(false);
  });

  it("A14 the flag clears on turnStarted and newConversationConfirmed only", async () => {
    const folder = await newPackage();
    await mkdir(join(folder, "agent"));
    await writeFile(join(folder, "agent", "conversation.json"), "{");
    const opened = await openArchive(folder);
    opened.archive.changedWithoutUndo();
    expect(opened.archive.preservingUnreadable).toBe(true);
    opened.archive.newConversationConfirmed();
    expect(opened.archive.preservingUnreadable).toBe(false);
    const again = await openArchive(folder);
    again.archive.turnStarted();
    expect(again.archive.preservingUnreadable).toBe(false);
  });
});

describe("concurrency", () => {
  it("two saves of one package from one process run one after the other", async () => {
    const folder = await newPackage();
    const events: string[] = [];
    const writerFor = (name: string) =>
      atomicFileWriter({ onStep: (step) => events.push(`${name}:${step}`) });
    const first = await openArchiveWith(folder, {}, { writer: writerFor("a") });
    const second = await openArchiveWith(folder, {}, { writer: writerFor("b") });
    const one = testImage(1000, 63);
    const two = testImage(1000, 64);
    const conversationA = conversationWith([one.block]);
    const conversationB = conversationWith([two.block], []);
    await Promise.all([
      first.archive.save(conversationA, imagesOf(one)),
      second.archive.save(conversationB, imagesOf(two)),
      first.archive.save(conversationA, imagesOf(one)),
    ]);
    const owners = events.map((event) => event.split(":")[0]);
    const switches = owners.filter((owner, index) => index > 0 && owner !== owners[index - 1]);
    expect(switches.length).toBeLessThanOrEqual(2);
    const reopened = await openArchive(folder);
    expect(reopened.notices).toEqual([]);
    expect(reopened.conversation).toEqual(conversationA);
    expect([...reopened.images.keys()]).toEqual([one.sha256]);
  });
});

describe("path safety", () => {
  it("only <64 hex>.<known extension> files are read, written or deleted; links are never followed or deleted", async () => {
    const folder = await newPackage();
    const image = testImage(100, 65);
    const { archive } = await openArchive(folder);
    await archive.save(conversationWith([image.block]), imagesOf(image));
    const images = join(folder, "agent", "images");
    const outside = join(folder, "..", "secret.png");
    await writeFile(outside, "secret");
    const linked = testImage(6, 66);
    const strays = [
      "notes.txt",
      `${image.sha256.toUpperCase()}.png`,
      `${image.sha256}.exe`,
      `${image.sha256.slice(1)}.png`,
      `${image.sha256}.png.bak`,
    ];
    for (const name of strays) await writeFile(join(images, name), "stray");
    await mkdir(join(images, `${"a".repeat(64)}.png`));
    await symlink(outside, join(images, `${linked.sha256}.png`));
    await symlink(outside, join(images, `${"b".repeat(64)}.png`));
    const before = await snapshotTree(folder);

    // A link under an image's name is not followed: the block reads as imageOmitted (A15).
    const withLink = conversationWith([image.block], [linked.block]);
    const { writeFile: write } = await import("node:fs/promises");
    const { encodeConversation } = await import("../../packages/library/src/format/encode.js");
    await write(join(folder, "agent", "conversation.json"), encodeConversation(withLink));
    const opened = await openArchive(folder);
    expect(opened.conversation.history[1]?.content[1]).toEqual({
      type: "imageOmitted",
      mimeType: "image/png",
    });
    // Saving, with the linked image's bytes held, neither replaces nor deletes the link.
    await opened.archive.save(withLink, imagesOf(image, linked));
    await opened.archive.save(conversationWith([]), new Map());
    const after = await snapshotTree(folder);
    for (const [path, value] of before) {
      if (path.startsWith("agent/images/") && path !== `agent/images/${image.sha256}.png`) {
        expect(after.get(path)).toBe(value);
      }
    }
    expect(after.has(`agent/images/${image.sha256}.png`)).toBe(false);
    expect(await readFile(outside, "utf8")).toBe("secret");

    // Removing agent/ leaves the links (and the folders that hold them) in place.
    await opened.archive.save(emptyConversation(), new Map());
    const removed = await snapshotTree(folder);
    expect(removed.get(`agent/images/${linked.sha256}.png`)).toBe(`link → ${outside}`);
    expect(removed.has("agent/conversation.json")).toBe(false);
    expect(removed.has("agent/images/notes.txt")).toBe(false);
    expect(await readFile(outside, "utf8")).toBe("secret");
  });

  it("an agent/ that is a symbolic link is not followed: it opens with a notice and a save that must replace it fails clearly", async () => {
    const folder = await newPackage();
    const elsewhere = await seedPackage();
    await symlink(join(elsewhere, "agent"), join(folder, "agent"));
    const opened = await openArchive(folder);
    expect(opened.notices).toHaveLength(1);
    expect(opened.conversation.history).toEqual([]);
    opened.archive.turnStarted();
    const image = testImage(10, 67);
    await expect(
      opened.archive.save(conversationWith([image.block]), imagesOf(image)),
    ).rejects.toMatchObject({ code: "archive_unsafe_path" });
    await expect(opened.archive.save(emptyConversation(), new Map())).rejects.toMatchObject({
      code: "archive_unsafe_path",
    });
    expect(await exists(join(elsewhere, "agent", "conversation.json"))).toBe(true);
  });
});
