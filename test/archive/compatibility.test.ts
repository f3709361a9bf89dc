import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
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
import { main } from "../../packages/library/src/cli/main.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";

const FORMAT_1_BAD = new URL("../fixtures/format-1/bad/", import.meta.url).pathname;

/** A package whose agent/ holds an unreadable conversation.json, an image and a stray file. */
async function unreadablePackage(content: string | Buffer): Promise<string> {
  const folder = await newPackage();
  await mkdir(join(folder, "agent", "images"), { recursive: true });
  await writeFile(join(folder, "agent", "conversation.json"), content);
  const image = testImage(300, 11);
  await writeFile(join(folder, "agent", "images", `${image.sha256}.png`), image.bytes);
  await writeFile(join(folder, "agent", "attachments.bin"), "from a newer version");
  return folder;
}

const unreadableCases: [string, () => Promise<string | Buffer>][] = [
  ["corrupt JSON", async () => '{"formatVersion" : 1, "items" : ['],
  ["a newer formatVersion", async () => readFile(join(FORMAT_1_BAD, "newer-version.json"))],
  ["an unknown item type", async () => readFile(join(FORMAT_1_BAD, "unknown-item-type.json"))],
  ["bytes that are not UTF-8", async () => readFile(join(FORMAT_1_BAD, "not-utf8.json"))],
];

describe("A14 an unreadable saved conversation", () => {
  it.each(unreadableCases)(
    "A14 %s opens empty with exactly one notice and agent/ is kept byte for byte",
    async (_, content) => {
      const folder = await unreadablePackage(await content());
      const before = await snapshotTree(folder);
      const opened = await openArchive(folder);
      expect(opened.conversation).toEqual(emptyConversation());
      expect(opened.notices).toHaveLength(1);
      expect(opened.notices[0]).toMatchObject({ kind: "unreadableConversation" });
      expect(opened.notices[0]?.reason).toMatch(/conversation\.json/);
      expect(opened.archive.preservingUnreadable).toBe(true);
      const image = testImage(100, 12);
      // Every save keeps the folder, whatever the live conversation holds.
      for (const conversation of [opened.conversation, conversationWith([image.block])]) {
        expect(await opened.archive.save(conversation, imagesOf(image))).toEqual({
          outcome: "kept",
          bytesWritten: 0,
        });
        expect(await snapshotTree(folder)).toEqual(before);
      }
    },
  );

  it("A14 the notice names the newer version", async () => {
    const folder = await unreadablePackage('{"formatVersion" : 2}');
    const { notices } = await openArchive(folder);
    expect(notices[0]?.reason).toContain("format 2");
  });

  it("A14 when a turn starts, the next save replaces the folder with format 1", async () => {
    const folder = await unreadablePackage('{"formatVersion" : 7, "whatever" : true}');
    const { archive } = await openArchive(folder);
    const image = testImage(100, 13);
    const conversation = conversationWith([image.block]);
    archive.turnStarted();
    expect(archive.preservingUnreadable).toBe(false);
    expect((await archive.save(conversation, imagesOf(image))).outcome).toBe("rewritten");
    expect(await readFile(join(folder, "agent", "conversation.json"))).toEqual(
      encodeConversation(conversation),
    );
    const reopened = await openArchive(folder);
    expect(reopened.notices).toEqual([]);
    expect(reopened.conversation).toEqual(conversation);
    // The old image (an image name the archive owns) is gone; the unknown file is left alone.
    const tree = await snapshotTree(folder);
    expect([...tree.keys()].filter((path) => path.startsWith("agent/images/"))).toEqual([
      "agent/images/",
      `agent/images/${image.sha256}.png`,
    ]);
    expect(tree.has("agent/attachments.bin")).toBe(true);
  });

  it("A14 when a new conversation is confirmed, the next save deletes agent/", async () => {
    const folder = await unreadablePackage("not json");
    const { archive } = await openArchive(folder);
    archive.newConversationConfirmed();
    expect(await archive.save(emptyConversation(), new Map())).toEqual({
      outcome: "removed",
      bytesWritten: 0,
    });
    expect(await exists(join(folder, "agent"))).toBe(false);
    expect(await exists(join(folder, "document.json"))).toBe(true);
  });

  it("A14 a conversation.json that is a symbolic link is not followed and reads as unreadable", async () => {
    const folder = await newPackage();
    await mkdir(join(folder, "agent"));
    const outside = join(folder, "..", "outside.json");
    await writeFile(outside, await readFile(join(FORMAT_1_BAD, "..", "seed-example.json")));
    const { symlink } = await import("node:fs/promises");
    await symlink(outside, join(folder, "agent", "conversation.json"));
    const opened = await openArchive(folder);
    expect(opened.notices).toHaveLength(1);
    expect(opened.notices[0]?.reason).toContain("symbolic link");
    expect(opened.conversation.history).toEqual([]);
  });
});

describe("A15 images that cannot be read", () => {
  it("A15 a missing image file and bytes that do not match the name read as imageOmitted", async () => {
    const folder = await newPackage();
    const missing = testImage(200, 14);
    const wrong = testImage(200, 15);
    const good = testImage(200, 16);
    const conversation = conversationWith([missing.block], [wrong.block, good.block]);
    const { archive } = await openArchive(folder);
    await archive.save(conversation, imagesOf(missing, wrong, good));
    const { rm } = await import("node:fs/promises");
    await rm(join(folder, "agent", "images", `${missing.sha256}.png`));
    await writeFile(join(folder, "agent", "images", `${wrong.sha256}.png`), "tampered");
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation.history[0]?.content[1]).toEqual({
      type: "imageOmitted",
      mimeType: "image/png",
    });
    expect(opened.conversation.history[1]?.content.slice(1)).toEqual([
      { type: "imageOmitted", mimeType: "image/png" },
      good.block,
    ]);
    expect([...opened.images.keys()]).toEqual([good.sha256]);
  });

  it("A15 a block read as imageOmitted is saved that way: resave of the seed's package prints rewritten, then unchanged", async () => {
    const folder = await seedPackage();
    const document = await readFile(join(folder, "document.json"));
    const first = bufferIO();
    expect(await main(["archive", "resave", folder], first)).toBe(0);
    expect(first.out().toString()).toBe("rewritten\n");
    const second = bufferIO();
    expect(await main(["archive", "resave", folder], second)).toBe(0);
    expect(second.out().toString()).toBe("unchanged\n");
    const saved = (await readFile(join(folder, "agent", "conversation.json"))).toString();
    expect(saved).not.toContain('"type" : "image"');
    expect(await readFile(join(folder, "document.json"))).toEqual(document);
  });
});
