import { createHash } from "node:crypto";
import { cp, lstat, mkdtemp, readdir, readFile, readlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import type { Block, Message } from "../../packages/library/src/history/message.js";

export const FIXTURE_PACKAGE = new URL("../fixtures/packages/Poster.silverpoint", import.meta.url)
  .pathname;

export async function temporaryFolder(prefix = "verbatim-archive-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** A fresh package folder holding only `document.json`. */
export async function newPackage(name = "Poster.silverpoint"): Promise<string> {
  const folder = join(await temporaryFolder(), name);
  await cp(FIXTURE_PACKAGE, folder, { recursive: true });
  const { rm } = await import("node:fs/promises");
  await rm(join(folder, "agent"), { recursive: true });
  return folder;
}

/** A copy of the seed's example package (its image has no file). */
export async function seedPackage(): Promise<string> {
  const folder = join(await temporaryFolder(), "Poster.silverpoint");
  await cp(FIXTURE_PACKAGE, folder, { recursive: true });
  return folder;
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Deterministic bytes that stand for an image: `size` bytes from a seed. */
export function imageBytes(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let index = 0; index < size; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[index] = state & 0xff;
  }
  return bytes;
}

export interface TestImage {
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly block: Block;
}

export function testImage(size: number, seed: number, mimeType = "image/png"): TestImage {
  const bytes = imageBytes(size, seed);
  const hash = sha256(bytes);
  return { bytes, sha256: hash, block: { type: "image", sha256: hash, mimeType } };
}

export function imagesOf(...images: TestImage[]): Map<string, Uint8Array> {
  return new Map(images.map((image) => [image.sha256, image.bytes]));
}

/** A conversation of one user message per entry: text plus the given blocks. */
export function conversationWith(...messages: (readonly Block[])[]): SavedConversation {
  const history: Message[] = messages.map((content, index) => ({
    role: "user",
    content: [{ type: "text", text: `message ${index}` }, ...content],
  }));
  return {
    ...emptyConversation(),
    provider: "anthropic",
    model: "claude-test",
    items: messages.map((_, index) => ({
      id: `item-${index}`,
      type: "user",
      text: `message ${index}`,
    })),
    history,
    sentFacts: [{ message: 0 }],
  };
}

/** Every file, folder and link under a folder with its bytes (or link target), for comparison. */
export async function snapshotTree(folder: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  async function walk(path: string, relative: string): Promise<void> {
    const info = await lstat(path);
    if (info.isSymbolicLink()) result.set(relative, `link → ${await readlink(path)}`);
    else if (info.isDirectory()) {
      result.set(relative + "/", "folder");
      for (const name of (await readdir(path)).sort()) {
        await walk(join(path, name), relative === "" ? name : `${relative}/${name}`);
      }
    } else result.set(relative, sha256(await readFile(path)));
  }
  await walk(folder, "");
  return result;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
