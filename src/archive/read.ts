import { join } from "node:path";
import { sha256Hex } from "../core/hash.js";
import { decodeConversation, type UnreadableReason } from "../format/decode.js";
import { emptyConversation } from "../format/empty.js";
import type { PendingMessage, SavedConversation } from "../format/conversation-schema.js";
import type { Block, Message } from "../history/message.js";
import {
  entryAt,
  forEachLimited,
  listOwnedFiles,
  readRegularFile,
  type Fingerprint,
} from "./disk.js";
import { imageFileName, type PackagePaths } from "./layout.js";

/** Why a saved conversation cannot be read (A14). */
export interface UnreadableFolder {
  /** One sentence for people. */
  readonly message: string;
  /** The decoder's reason, when the file was read but could not be decoded. */
  readonly decode?: UnreadableReason;
}

/** What is on disk in `agent/`, as the archive left it or found it. */
export interface DiskState {
  /** The bytes of conversation.json when it was readable (compared before the next write). */
  conversationBytes: Buffer | undefined;
  conversationFingerprint: Fingerprint | undefined;
  imagesFingerprint: Fingerprint | undefined;
  /** Image files whose bytes were checked against their name (read at open or written by us). */
  readonly verifiedImages: Set<string>;
  /** Other image files with a valid name (not checked): deleted unless the next save needs them. */
  readonly otherImages: Set<string>;
  /** Temporary files left by an interrupted save (full paths), removed by the next save. */
  readonly temporaries: Set<string>;
}

export interface AgentFolderRead {
  readonly state: "absent" | "readable" | "unreadable";
  /** `agent/` exists (as anything: folder, file or link). */
  readonly agentExists: boolean;
  readonly conversation: SavedConversation;
  /** Verified images of the conversation, by SHA-256. */
  readonly images: Map<string, Uint8Array>;
  readonly unreadable?: UnreadableFolder;
  /** Image blocks that read as `imageOmitted` because their file is missing or wrong (A15). */
  readonly unreadableImageBlocks: number;
  readonly disk: DiskState;
}

export function emptyDisk(): DiskState {
  return {
    conversationBytes: undefined,
    conversationFingerprint: undefined,
    imagesFingerprint: undefined,
    verifiedImages: new Set(),
    otherImages: new Set(),
    temporaries: new Set(),
  };
}

function unreadableRead(agentExists: boolean, unreadable: UnreadableFolder): AgentFolderRead {
  return {
    state: "unreadable",
    agentExists,
    conversation: emptyConversation(),
    images: new Map(),
    unreadable,
    unreadableImageBlocks: 0,
    disk: emptyDisk(),
  };
}

/** Every image a conversation refers to: history blocks and queued or returned messages. */
export function referencedImageNames(conversation: SavedConversation): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of conversation.history) {
    for (const block of message.content) {
      if (block.type === "image")
        names.set(imageFileName(block.sha256, block.mimeType), block.sha256);
    }
  }
  for (const pending of [...conversation.queued, ...conversation.unsent]) {
    for (const image of pending.images ?? []) {
      names.set(imageFileName(image.sha256, image.mimeType), image.sha256);
    }
  }
  return names;
}

const READ_CONCURRENCY = 16;

/**
 * Reads `agent/` of a package. Never throws for anything inside `agent/`: an unreadable file
 * gives `state: "unreadable"` with the reason (A14); a missing or wrong image reads as
 * `imageOmitted` (A15).
 */
export async function readAgentFolder(paths: PackagePaths): Promise<AgentFolderRead> {
  let agent;
  try {
    agent = await entryAt(paths.agentDir);
  } catch (error) {
    return unreadableRead(true, { message: `agent/ cannot be read: ${describe(error)}` });
  }
  if (agent.kind === "absent") return absentRead(false);
  if (agent.kind === "symlink") {
    return unreadableRead(true, {
      message: "agent/ is a symbolic link, which verbatim does not follow",
    });
  }
  if (agent.kind !== "folder") return unreadableRead(true, { message: "agent/ is not a folder" });

  let file;
  try {
    file = await entryAt(paths.conversationFile);
  } catch (error) {
    return unreadableRead(true, {
      message: `agent/conversation.json cannot be read: ${describe(error)}`,
    });
  }
  if (file.kind === "absent") return absentRead(true);
  if (file.kind !== "file") {
    return unreadableRead(true, {
      message:
        file.kind === "symlink"
          ? "agent/conversation.json is a symbolic link, which verbatim does not follow"
          : "agent/conversation.json is not a regular file",
    });
  }
  const read = await readRegularFile(paths.conversationFile);
  if (read === undefined) {
    return unreadableRead(true, { message: "agent/conversation.json cannot be read" });
  }
  const decoded = decodeConversation(read.bytes);
  if (!decoded.ok) {
    return unreadableRead(true, {
      message: `agent/conversation.json cannot be read: ${decoded.reason.message}`,
      decode: decoded.reason,
    });
  }

  const disk = emptyDisk();
  for (const name of (await listOwnedFiles(paths.agentDir)).temporaries) {
    disk.temporaries.add(join(paths.agentDir, name));
  }
  disk.conversationBytes = read.bytes;
  disk.conversationFingerprint = read.fingerprint;
  const images = await entryAt(paths.imagesDir).catch(() => ({ kind: "absent" as const }));
  const found = new Map<string, Uint8Array>();
  if (images.kind === "folder") {
    disk.imagesFingerprint = images.fingerprint;
    const owned = await listOwnedFiles(paths.imagesDir);
    for (const name of owned.images) disk.otherImages.add(name);
    for (const name of owned.temporaries) disk.temporaries.add(join(paths.imagesDir, name));
    const wanted = [...referencedImageNames(decoded.conversation)].filter(([name]) =>
      disk.otherImages.has(name),
    );
    await forEachLimited(wanted, READ_CONCURRENCY, async ([name, sha256]) => {
      const image = await readRegularFile(join(paths.imagesDir, name));
      if (image === undefined || sha256Hex(image.bytes) !== sha256) return;
      found.set(name, image.bytes);
      disk.otherImages.delete(name);
      disk.verifiedImages.add(name);
    });
  }
  const {
    conversation,
    images: bySha,
    omittedBlocks,
  } = withImagesFound(decoded.conversation, found);
  return {
    state: "readable",
    agentExists: true,
    conversation,
    images: bySha,
    unreadableImageBlocks: omittedBlocks,
    disk,
  };
}

function absentRead(agentExists: boolean): AgentFolderRead {
  return {
    state: "absent",
    agentExists,
    conversation: emptyConversation(),
    images: new Map(),
    unreadableImageBlocks: 0,
    disk: emptyDisk(),
  };
}

/**
 * The conversation as it reads with the images found (A15): an image block whose file is
 * missing or wrong becomes `imageOmitted`; a queued or returned message loses that image.
 */
function withImagesFound(
  conversation: SavedConversation,
  found: ReadonlyMap<string, Uint8Array>,
): { conversation: SavedConversation; images: Map<string, Uint8Array>; omittedBlocks: number } {
  const images = new Map<string, Uint8Array>();
  let omittedBlocks = 0;
  const history = conversation.history.map((message): Message => {
    if (!message.content.some((block) => block.type === "image")) return message;
    let changed = false;
    const content = message.content.map((block): Block => {
      if (block.type !== "image") return block;
      const bytes = found.get(imageFileName(block.sha256, block.mimeType));
      if (bytes !== undefined) {
        images.set(block.sha256, bytes);
        return block;
      }
      changed = true;
      omittedBlocks++;
      return { type: "imageOmitted", mimeType: block.mimeType };
    });
    return changed ? { role: message.role, content } : message;
  });
  const pending = (messages: readonly PendingMessage[]): PendingMessage[] =>
    messages.map((message) => {
      if (message.images === undefined) return message;
      const kept = message.images.filter((image) => {
        const bytes = found.get(imageFileName(image.sha256, image.mimeType));
        if (bytes !== undefined) images.set(image.sha256, bytes);
        return bytes !== undefined;
      });
      return kept.length === message.images.length ? message : { ...message, images: kept };
    });
  return {
    conversation: {
      ...conversation,
      history,
      queued: pending(conversation.queued),
      unsent: pending(conversation.unsent),
    },
    images,
    omittedBlocks,
  };
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}
