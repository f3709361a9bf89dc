import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openArchiveWith } from "../../packages/library/src/archive/archive.js";
import { applyImageBudget } from "../../packages/library/src/archive/budget.js";
import { IMAGE_BUDGET_BYTES, openArchive } from "../../packages/library/src/archive/index.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import type { Block } from "../../packages/library/src/history/message.js";
import { conversationWith, imagesOf, newPackage, testImage, type TestImage } from "./helpers.js";

const omitted = (image: TestImage): Block => ({ type: "imageOmitted", mimeType: "image/png" });

function budget(conversation: SavedConversation, images: Map<string, Uint8Array>, bytes: number) {
  return applyImageBudget(conversation, images, {
    budgetBytes: bytes,
    canStore: () => true,
    copies: new WeakMap(),
  });
}

/** The image blocks of each message (text blocks left out). */
function imageBlocks(conversation: SavedConversation): Block[][] {
  return conversation.history.map((message) =>
    message.content.filter((block) => block.type !== "text"),
  );
}

describe("A16 the 20 MiB image budget", () => {
  it("A16 the budget is 20 MiB, 20,971,520 bytes", () => {
    expect(IMAGE_BUDGET_BYTES).toBe(20_971_520);
  });

  it("A16 images summing exactly to the limit are all kept; one byte over omits the oldest", async () => {
    const a = testImage(10 * 1024 * 1024, 21);
    const b = testImage(10 * 1024 * 1024, 22);
    const folder = await newPackage();
    const { archive } = await openArchive(folder);
    const fits = conversationWith([a.block], [b.block]);
    await archive.save(fits, imagesOf(a, b));
    let reopened = await openArchive(folder);
    expect(reopened.conversation).toEqual(fits);
    expect(reopened.images.size).toBe(2);

    const c = testImage(1, 23); // the newest image: one byte over
    const over = conversationWith([a.block], [b.block], [c.block]);
    const result = await archive.save(over, imagesOf(a, b, c));
    expect(result.outcome).toBe("rewritten");
    reopened = await openArchive(folder);
    expect(imageBlocks(reopened.conversation)).toEqual([[omitted(a)], [b.block], [c.block]]);
    expect((await readdir(join(folder, "agent", "images"))).sort()).toEqual(
      [`${b.sha256}.png`, `${c.sha256}.png`].sort(),
    );
    // The live conversation is not changed: it still holds the image.
    expect(over.history[0]?.content[1]).toEqual(a.block);
  });

  it("A16 a repeated image straddling the cut: the occurrence older than the first image that does not fit is omitted", () => {
    const repeated = testImage(40, 24);
    const big = testImage(70, 25);
    // Newest first: repeated (40, kept), big (40+70 > 100: cut), repeated again (older than the cut).
    const conversation = conversationWith([repeated.block], [big.block], [repeated.block]);
    const result = budget(conversation, imagesOf(repeated, big), 100);
    expect(imageBlocks(result.conversation)).toEqual([
      [omitted(repeated)],
      [omitted(big)],
      [repeated.block],
    ]);
    expect([...result.images.keys()]).toEqual([`${repeated.sha256}.png`]);
  });

  it("A16 an image sent twice counts once, at its newer position", () => {
    const repeated = testImage(60, 26);
    const small = testImage(40, 27);
    // Newest first: repeated (60), small (100, fits exactly), repeated again (already counted).
    const conversation = conversationWith([repeated.block], [small.block], [repeated.block]);
    const result = budget(conversation, imagesOf(repeated, small), 100);
    expect(result.conversation).toBe(conversation);
    expect(result.omittedOccurrences).toBe(0);
  });

  it("A16 a single image larger than the budget is omitted, and so is every older one", () => {
    const older = testImage(10, 28);
    const huge = testImage(101, 29);
    const conversation = conversationWith([older.block], [huge.block]);
    const result = budget(conversation, imagesOf(older, huge), 100);
    expect(imageBlocks(result.conversation)).toEqual([[omitted(older)], [omitted(huge)]]);
    expect(result.images.size).toBe(0);
  });

  it("A16 queued and returned messages count as newest; an image past the budget leaves them", () => {
    const inHistory = testImage(60, 30);
    const queued = testImage(60, 31);
    const conversation: SavedConversation = {
      ...conversationWith([inHistory.block]),
      queued: [
        { id: "q", text: "look", images: [{ sha256: queued.sha256, mimeType: "image/png" }] },
      ],
    };
    const result = budget(conversation, imagesOf(inHistory, queued), 100);
    expect(imageBlocks(result.conversation)).toEqual([[omitted(inHistory)]]);
    expect(result.conversation.queued[0]?.images).toHaveLength(1);
    const tooSmall = budget(conversation, imagesOf(inHistory, queued), 50);
    expect(tooSmall.conversation.queued[0]?.images).toEqual([]);
    expect(conversation.queued[0]?.images).toHaveLength(1);
  });

  it("A16 as the conversation grows, the cut moves and older images are dropped from disk", async () => {
    const folder = await newPackage();
    const { archive } = await openArchiveWith(folder, {}, { budgetBytes: 250 });
    const images = [0, 1, 2, 3, 4].map((index) => testImage(100, 40 + index));
    const held = imagesOf(...images);
    for (let count = 1; count <= images.length; count++) {
      const conversation = conversationWith(
        ...images.slice(0, count).map((image) => [image.block]),
      );
      await archive.save(conversation, held);
      const names = await readdir(join(folder, "agent", "images"));
      expect(names.sort()).toEqual(
        images
          .slice(Math.max(0, count - 2), count)
          .map((image) => `${image.sha256}.png`)
          .sort(),
      );
    }
    const reopened = await openArchive(folder);
    expect(imageBlocks(reopened.conversation).map((blocks) => blocks[0]?.type)).toEqual([
      "imageOmitted",
      "imageOmitted",
      "imageOmitted",
      "image",
      "image",
    ]);
  });

  it("A16 an image whose bytes the caller does not hold is saved as imageOmitted without moving the cut", () => {
    const held = testImage(50, 50);
    const notHeld = testImage(50, 51);
    const conversation = conversationWith([held.block], [notHeld.block]);
    const result = budget(conversation, imagesOf(held), 100);
    expect(imageBlocks(result.conversation)).toEqual([[held.block], [omitted(notHeld)]]);
  });
});
