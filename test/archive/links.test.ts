import { execFileSync } from "node:child_process";
import { renameSync, symlinkSync } from "node:fs";
import { mkdir, readFile, rename, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { atomicFileWriter, type SaveStep } from "../../packages/library/src/archive/file-writer.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import {
  conversationWith,
  imagesOf,
  newPackage,
  snapshotTree,
  temporaryFolder,
  testImage,
} from "./helpers.js";

// Regression tests for the defect "A save deletes files outside the package": links at
// agent/, agent/images and every file under them are never opened, listed, written or deleted
// through (docs/archive.md, "Path safety").

const TEMPORARY = ".verbatim-0123456789abcdef.tmp";

/** A folder outside the package holding files named like the archive's own. */
async function outsideFolder(): Promise<string> {
  const folder = join(await temporaryFolder("verbatim-outside-"), "victim");
  await mkdir(join(folder, "images"), { recursive: true });
  await writeFile(join(folder, `${"a".repeat(64)}.png`), "not an image of ours");
  await writeFile(join(folder, `${"b".repeat(64)}.jpg`), "not an image of ours");
  await writeFile(join(folder, TEMPORARY), "not a temporary file of ours");
  await writeFile(join(folder, "conversation.json"), '{ "formatVersion" : 1 }');
  await writeFile(join(folder, "images", `${"c".repeat(64)}.png`), "nor this");
  await writeFile(join(folder, "images", TEMPORARY), "nor this");
  return folder;
}

/** A package saved with one image, ready to have a link put in. */
async function savedPackage(): Promise<{ folder: string; image: ReturnType<typeof testImage> }> {
  const folder = await newPackage();
  const image = testImage(300, 91);
  const { archive } = await openArchive(folder);
  await archive.save(conversationWith([image.block]), imagesOf(image));
  return { folder, image };
}

async function replaceWithLink(path: string, target: string): Promise<void> {
  await rename(path, `${path}.moved`);
  await symlink(target, path);
}

async function resave(folder: string) {
  const io = bufferIO();
  const code = await main(["archive", "resave", folder], io);
  return { code, out: io.out().toString(), err: io.err() };
}

describe("a save deletes files outside the package (links)", () => {
  it("A14 agent/images a link: open gives one notice, the save keeps everything and the outside folder is untouched", async () => {
    const { folder, image } = await savedPackage();
    const outside = await outsideFolder();
    await replaceWithLink(join(folder, "agent", "images"), outside);
    const outsideBefore = await snapshotTree(outside);
    const packageBefore = await snapshotTree(folder);

    const opened = await openArchive(folder);
    expect(opened.notices).toHaveLength(1);
    expect(opened.notices[0]?.reason).toContain("agent/images is a symbolic link");
    expect(opened.conversation.history).toEqual([]);
    expect(opened.archive.preservingUnreadable).toBe(true);
    expect(await opened.archive.save(opened.conversation, opened.images)).toEqual({
      outcome: "kept",
      bytesWritten: 0,
    });
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    expect(await snapshotTree(folder)).toEqual(packageBefore);

    // A turn starts: the save must write through agent/images, so it refuses.
    opened.archive.turnStarted();
    await expect(
      opened.archive.save(conversationWith([image.block]), imagesOf(image)),
    ).rejects.toMatchObject({ code: "archive_unsafe_path" });
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
  });

  it("agent/images replaced by a link after the open: the next save refuses and deletes nothing outside", async () => {
    const { folder, image } = await savedPackage();
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    const outside = await outsideFolder();
    await replaceWithLink(join(folder, "agent", "images"), outside);
    const outsideBefore = await snapshotTree(outside);
    const other = testImage(200, 92);
    await expect(
      opened.archive.save(conversationWith([other.block]), imagesOf(image, other)),
    ).rejects.toMatchObject({ code: "archive_unsafe_path" });
    await expect(
      opened.archive.save(conversationWith([image.block], []), imagesOf(image)),
    ).rejects.toMatchObject({ code: "archive_unsafe_path" });
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    // Removing agent/ leaves the link, and what it points to, alone.
    expect((await opened.archive.save(emptyConversation(), new Map())).outcome).toBe("removed");
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    expect((await snapshotTree(folder)).get("agent/images")).toBe(`link → ${outside}`);
  });

  it("CLI resave with agent/images a link: prints kept, exit 1, names the link, deletes nothing", async () => {
    const { folder } = await savedPackage();
    const outside = await outsideFolder();
    await replaceWithLink(join(folder, "agent", "images"), outside);
    const outsideBefore = await snapshotTree(outside);
    const { code, out, err } = await resave(folder);
    expect(out).toBe("kept\n");
    expect(code).toBe(1);
    expect(err).toContain("agent/images is a symbolic link");
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    const check = bufferIO();
    expect(await main(["archive", "check", folder], check)).toBe(1);
  });

  it("agent/ a link: the save reads nothing through it and deletes none of its temporary files", async () => {
    const folder = await newPackage();
    const outside = await outsideFolder();
    await symlink(outside, join(folder, "agent"));
    const outsideBefore = await snapshotTree(outside);
    const opened = await openArchive(folder);
    expect(opened.notices).toHaveLength(1);
    expect(opened.notices[0]?.reason).toContain("agent/ is a symbolic link");
    expect((await opened.archive.save(opened.conversation, opened.images)).outcome).toBe("kept");
    opened.archive.turnStarted();
    const image = testImage(100, 93);
    await expect(
      opened.archive.save(conversationWith([image.block]), imagesOf(image)),
    ).rejects.toMatchObject({ code: "archive_unsafe_path" });
    await expect(opened.archive.save(emptyConversation(), new Map())).rejects.toMatchObject({
      code: "archive_unsafe_path",
    });
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    const { code, out } = await resave(folder);
    expect([code, out]).toEqual([1, "kept\n"]);
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
  });

  it("agent/ replaced by a link after the open: saves refuse before reading or deleting anything", async () => {
    const { folder, image } = await savedPackage();
    const opened = await openArchive(folder);
    const outside = await outsideFolder();
    await replaceWithLink(join(folder, "agent"), outside);
    const outsideBefore = await snapshotTree(outside);
    for (const conversation of [conversationWith([image.block]), conversationWith([], [])]) {
      await expect(opened.archive.save(conversation, imagesOf(image))).rejects.toMatchObject({
        code: "archive_unsafe_path",
      });
    }
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
  });

  it("temporary files and image files that are links are neither followed nor deleted", async () => {
    const { folder, image } = await savedPackage();
    const outside = await outsideFolder();
    const secret = join(outside, `${"a".repeat(64)}.png`);
    const imageLink = join(folder, "agent", "images", `${"d".repeat(64)}.png`);
    const temporaryLinks = [
      join(folder, "agent", TEMPORARY),
      join(folder, "agent", "images", TEMPORARY),
    ];
    await symlink(secret, imageLink);
    for (const path of temporaryLinks) await symlink(secret, path);
    const outsideBefore = await snapshotTree(outside);
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    const other = testImage(120, 94);
    await opened.archive.save(conversationWith([other.block]), imagesOf(image, other));
    const after = await snapshotTree(folder);
    expect(after.get(`agent/images/${"d".repeat(64)}.png`)).toBe(`link → ${secret}`);
    expect(after.get(`agent/${TEMPORARY}`)).toBe(`link → ${secret}`);
    expect(after.get(`agent/images/${TEMPORARY}`)).toBe(`link → ${secret}`);
    expect(after.has(`agent/images/${image.sha256}.png`)).toBe(false);
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
  });

  it("agent/ swapped for a link in the middle of a save: the rest of the save still lands in the real folder", async () => {
    const { folder, image } = await savedPackage();
    const outside = await outsideFolder();
    const outsideBefore = await snapshotTree(outside);
    const agent = join(folder, "agent");
    let swapped = false;
    const writer = atomicFileWriter({
      onStep: (step: SaveStep) => {
        if (swapped || step !== "rename") return;
        swapped = true;
        // Synchronous, between the check of agent/ and every later use of it.
        renameSync(agent, `${agent}.moved`);
        symlinkSync(outside, agent);
      },
    });
    const opened = await openArchiveWith(folder, {}, { writer });
    const other = testImage(150, 95);
    await opened.archive.save(conversationWith([other.block]), imagesOf(image, other));
    expect(swapped).toBe(true);
    expect(await snapshotTree(outside)).toEqual(outsideBefore);
    const moved = `${agent}.moved`;
    expect(await readFile(join(moved, "images", `${other.sha256}.png`))).toEqual(
      Buffer.from(other.bytes),
    );
    expect((await stat(join(moved, "conversation.json"))).isFile()).toBe(true);
  });

  it("an image name held by a named pipe does not hang the open: the block reads as imageOmitted", async () => {
    const { folder, image } = await savedPackage();
    const name = join(folder, "agent", "images", `${image.sha256}.png`);
    const { rm } = await import("node:fs/promises");
    await rm(name);
    execFileSync("mkfifo", [name]);
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation.history[0]?.content[1]).toEqual({
      type: "imageOmitted",
      mimeType: "image/png",
    });
    expect((await stat(name)).isFIFO()).toBe(true);
  }, 10_000);
});
