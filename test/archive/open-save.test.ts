import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
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

describe("open and save", () => {
  it("A13 a package without agent/ opens empty with no notice, and an empty save writes nothing", async () => {
    const folder = await newPackage();
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation).toEqual(emptyConversation());
    expect(opened.images.size).toBe(0);
    expect(opened.archive.preservingUnreadable).toBe(false);
    const result = await opened.archive.save(opened.conversation, opened.images);
    expect(result).toEqual({ outcome: "unchanged", bytesWritten: 0 });
    expect(await exists(join(folder, "agent"))).toBe(false);
  });

  it("A13 an agent/ without conversation.json opens empty with no notice", async () => {
    const folder = await newPackage();
    await mkdir(join(folder, "agent", "images"), { recursive: true });
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation.history).toEqual([]);
  });

  it("A1 A3 saves conversation.json and each image once, named by its SHA-256 and MIME type", async () => {
    const folder = await newPackage();
    const png = testImage(3000, 1);
    const jpeg = testImage(2000, 2, "image/jpeg");
    const conversation = conversationWith([png.block], [jpeg.block, png.block], [png.block]);
    const { archive } = await openArchive(folder);
    const result = await archive.save(conversation, imagesOf(png, jpeg));
    expect(result.outcome).toBe("rewritten");
    expect(result.bytesWritten).toBe(
      encodeConversation(conversation).length + png.bytes.length + jpeg.bytes.length,
    );
    expect((await readdir(join(folder, "agent"))).sort()).toEqual(["conversation.json", "images"]);
    expect((await readdir(join(folder, "agent", "images"))).sort()).toEqual(
      [`${png.sha256}.png`, `${jpeg.sha256}.jpg`].sort(),
    );
    expect(await readFile(join(folder, "agent", "images", `${png.sha256}.png`))).toEqual(
      Buffer.from(png.bytes),
    );
    expect(await readFile(join(folder, "document.json"), "utf8")).toContain('"Poster"');
  });

  it("A2 the file is the canonical encoding, and an unchanged save writes nothing at all", async () => {
    const folder = await newPackage();
    const image = testImage(500, 3);
    const conversation = conversationWith([image.block], []);
    const { archive } = await openArchive(folder);
    await archive.save(conversation, imagesOf(image));
    const file = join(folder, "agent", "conversation.json");
    expect(await readFile(file)).toEqual(encodeConversation(conversation));
    const before = await stat(file);
    const again = await archive.save(conversation, imagesOf(image));
    expect(again).toEqual({ outcome: "unchanged", bytesWritten: 0 });
    // An equal conversation made of new objects is unchanged too.
    const copy = structuredClone(conversation);
    expect(await archive.save(copy, imagesOf(image))).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
    const after = await stat(file);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    // Reopened, the same conversation is unchanged as well.
    const reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(conversation);
    expect(await reopened.archive.save(reopened.conversation, reopened.images)).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
  });

  it("A3 images no longer referenced are removed; kept ones are not rewritten", async () => {
    const folder = await newPackage();
    const first = testImage(1000, 4);
    const second = testImage(1000, 5);
    const { archive } = await openArchive(folder);
    await archive.save(conversationWith([first.block], [second.block]), imagesOf(first, second));
    const keptFile = join(folder, "agent", "images", `${second.sha256}.png`);
    const keptBefore = await stat(keptFile);
    const result = await archive.save(conversationWith([second.block]), imagesOf(first, second));
    expect(result.outcome).toBe("rewritten");
    expect(await readdir(join(folder, "agent", "images"))).toEqual([`${second.sha256}.png`]);
    expect((await stat(keptFile)).ino).toBe(keptBefore.ino);
  });

  it("A15 a save notices images deleted by someone else since the last save and writes them again", async () => {
    const folder = await newPackage();
    const image = testImage(900, 10);
    const conversation = conversationWith([image.block]);
    const { archive } = await openArchive(folder);
    await archive.save(conversation, imagesOf(image));
    const { rm } = await import("node:fs/promises");
    await rm(join(folder, "agent", "images", `${image.sha256}.png`));
    const result = await archive.save(conversation, imagesOf(image));
    expect(result).toEqual({ outcome: "rewritten", bytesWritten: image.bytes.length });
    const reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(conversation);
  });

  it("A2 a conversation.json changed by someone else is compared again and rewritten", async () => {
    const folder = await newPackage();
    const conversation = conversationWith([]);
    const { archive } = await openArchive(folder);
    await archive.save(conversation, new Map());
    const file = join(folder, "agent", "conversation.json");
    await writeFile(file, JSON.stringify({ formatVersion: 1 }));
    expect((await archive.save(conversation, new Map())).outcome).toBe("rewritten");
    expect(await readFile(file)).toEqual(encodeConversation(conversation));
  });

  it("A4 an empty conversation removes an existing agent/", async () => {
    const folder = await newPackage();
    const image = testImage(100, 6);
    const { archive } = await openArchive(folder);
    await archive.save(conversationWith([image.block]), imagesOf(image));
    expect(await archive.save(emptyConversation(), new Map())).toEqual({
      outcome: "removed",
      bytesWritten: 0,
    });
    expect(await exists(join(folder, "agent"))).toBe(false);
    expect(await archive.save(emptyConversation(), new Map())).toEqual({
      outcome: "unchanged",
      bytesWritten: 0,
    });
  });

  it.each(["template", "designSystem"] as const)(
    "A4 a %s package never gets agent/, and one already there is left alone",
    async (kind) => {
      const folder = await newPackage();
      const { archive, conversation, notices } = await openArchive(folder, { kind });
      expect(conversation.history).toEqual([]);
      expect(notices).toEqual([]);
      const image = testImage(100, 7);
      expect(await archive.save(conversationWith([image.block]), imagesOf(image))).toEqual({
        outcome: "skipped",
        bytesWritten: 0,
      });
      expect(await exists(join(folder, "agent"))).toBe(false);
      const seeded = await seedPackage();
      const before = await snapshotTree(seeded);
      const template = await openArchive(seeded, { kind });
      expect(template.conversation.history).toEqual([]);
      await template.archive.save(conversationWith([]), new Map());
      expect(await snapshotTree(seeded)).toEqual(before);
    },
  );

  it("A10 A10a saves queued and returned messages with their images, and they come back", async () => {
    const folder = await newPackage();
    const image = testImage(700, 8);
    const conversation = {
      ...conversationWith([]),
      queued: [
        { id: "q1", text: "next", images: [{ sha256: image.sha256, mimeType: "image/png" }] },
      ],
      unsent: [{ id: "u1", text: "returned" }],
    };
    const { archive } = await openArchive(folder);
    await archive.save(conversation, imagesOf(image));
    const reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(conversation);
    expect([...reopened.images.keys()]).toEqual([image.sha256]);
    expect(Buffer.from(reopened.images.get(image.sha256) ?? [])).toEqual(Buffer.from(image.bytes));
  });

  it("the package folder itself missing is the only error open raises", async () => {
    await expect(openArchive("/nonexistent/Poster.silverpoint")).rejects.toMatchObject({
      code: "archive_package_unreadable",
    });
  });

  it("refuses image bytes that do not hash to their key, before writing anything", async () => {
    const folder = await newPackage();
    const image = testImage(100, 9);
    const { archive } = await openArchive(folder);
    await expect(
      archive.save(conversationWith([image.block]), new Map([[image.sha256, new Uint8Array(5)]])),
    ).rejects.toMatchObject({ code: "archive_image_mismatch" });
    expect(await exists(join(folder, "agent"))).toBe(false);
  });

  it("A12 the seed's example package opens with the real decoder", async () => {
    const folder = await seedPackage();
    const bytes = await readFile(join(folder, "agent", "conversation.json"));
    expect(decodeConversation(bytes).ok).toBe(true);
    const opened = await openArchive(folder);
    expect(opened.notices).toEqual([]);
    expect(opened.conversation.history).toHaveLength(5);
  });
});
