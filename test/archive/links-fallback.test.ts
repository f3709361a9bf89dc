import { renameSync, symlinkSync } from "node:fs";
import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { atomicFileWriter, type SaveStep } from "../../packages/library/src/archive/file-writer.js";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { useDescriptorPaths } from "../../packages/library/src/archive/package-folders.js";
import {
  conversationWith,
  imagesOf,
  newPackage,
  snapshotTree,
  temporaryFolder,
  testImage,
} from "./helpers.js";

// The defect "A save deletes files outside the package", on systems without /proc/self/fd:
// each folder's path is checked against the open folder whenever a path inside it is formed.

async function outsideFolder(): Promise<string> {
  const folder = join(await temporaryFolder("verbatim-outside-"), "victim");
  await mkdir(folder);
  await writeFile(join(folder, `${"a".repeat(64)}.png`), "not an image of ours");
  await writeFile(join(folder, ".verbatim-0123456789abcdef.tmp"), "not ours");
  return folder;
}

describe("links under the package, without descriptor paths", () => {
  beforeAll(() => useDescriptorPaths(false));
  afterAll(() => useDescriptorPaths(true));

  it("saves and reopens as usual", async () => {
    const folder = await newPackage();
    const image = testImage(200, 96);
    const conversation = conversationWith([image.block]);
    const { archive } = await openArchive(folder);
    expect((await archive.save(conversation, imagesOf(image))).outcome).toBe("rewritten");
    const reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(conversation);
    expect(await reopened.archive.save(reopened.conversation, reopened.images)).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
  });

  it("agent/images replaced by a link after the open: the save refuses, nothing outside is touched", async () => {
    const folder = await newPackage();
    const image = testImage(200, 97);
    const opened = await openArchive(folder);
    await opened.archive.save(conversationWith([image.block]), imagesOf(image));
    const outside = await outsideFolder();
    const images = join(folder, "agent", "images");
    await rename(images, `${images}.moved`);
    await symlink(outside, images);
    const before = await snapshotTree(outside);
    await expect(opened.archive.save(conversationWith([]), new Map())).rejects.toMatchObject({
      code: "archive_unsafe_path",
    });
    expect(await snapshotTree(outside)).toEqual(before);
  });

  it("agent/ swapped for a link in the middle of a save: the save stops, nothing outside is touched", async () => {
    const folder = await newPackage();
    const image = testImage(200, 98);
    const first = await openArchive(folder);
    await first.archive.save(conversationWith([image.block]), imagesOf(image));
    const outside = await outsideFolder();
    const before = await snapshotTree(outside);
    const agent = join(folder, "agent");
    let swapped = false;
    const writer = atomicFileWriter({
      onStep: (step: SaveStep) => {
        if (swapped || step !== "rename") return;
        swapped = true;
        renameSync(agent, `${agent}.moved`);
        symlinkSync(outside, agent);
      },
    });
    const opened = await openArchiveWith(folder, {}, { writer });
    const other = testImage(150, 99);
    // The rename already under way fails (its temporary file is in the moved folder), or the
    // next check of agent/ refuses: either way the save stops.
    await expect(
      opened.archive.save(conversationWith([other.block]), imagesOf(image, other)),
    ).rejects.toMatchObject({
      code: expect.stringMatching(/^archive_(unsafe_path|write_failed)$/) as unknown,
    });
    expect(swapped).toBe(true);
    expect(await snapshotTree(outside)).toEqual(before);
    // The package still opens with the conversation of the last complete save.
    renameSync(agent, `${agent}.link`);
    renameSync(`${agent}.moved`, agent);
    const reopened = await openArchive(folder);
    expect(reopened.notices).toEqual([]);
    expect(reopened.conversation).toEqual(conversationWith([image.block]));
  });
});
