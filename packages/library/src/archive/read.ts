import { join } from "node:path";
import { sha256Hex } from "../core/hash.js";
import type { UnreadableReason } from "../format/decode.js";
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
import { readConversationFile } from "./conversation-file.js";
import { CONVERSATION_FILE, IMAGES_FOLDER, imageFileName, type PackagePaths } from "./layout.js";
import { PackageFolders } from "./package-folders.js";

/** Why a saved conversation cannot be read (A14). */
export interface UnreadableFolder {
  /** One sentence for people. */
  readonly message: string;
  /** The decoder's reason, when the file was read but could not be decoded. */
  readonly decode?: UnreadableReason;
}

/** What is on disk in `agent/`, as the archive left it or found it. */
export interface DiskState {
  /**
   * Right after opening: `conversation.json` is exactly the canonical encoding of the
   * conversation returned (found while decoding it), every image it names was read and there
   * is nothing to clean up, so a save of that same conversation has nothing to write.
   */
  canonicalAtOpen: boolean;
  conversationFingerprint: Fingerprint | undefined;
  imagesFingerprint: Fingerprint | undefined;
  /** Image files whose bytes were checked against their name (read at open or written by us). */
  readonly verifiedImages: Set<string>;
  /** Other image files with a valid name (not checked): deleted unless the next save needs them. */
  readonly otherImages: Set<string>;
  /** Temporary files left by an interrupted save (`name` or `images/name`), removed next save. */
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
    canonicalAtOpen: false,
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
 * `imageOmitted` (A15). Nothing is reached through a symbolic link: a link at `agent/`,
 * `agent/images/` or `agent/conversation.json` makes the conversation unreadable (A14).
 */
export async function readAgentFolder(paths: PackagePaths): Promise<AgentFolderRead> {
  let folders: PackageFolders;
  try {
    folders = PackageFolders.open(paths.packageDir);
  } catch (error) {
    return unreadableRead(true, { message: `agent/ cannot be read: ${describe(error)}` });
  }
  try {
    return await readFrom(folders);
  } finally {
    folders.close();
  }
}

async function readFrom(folders: PackageFolders): Promise<AgentFolderRead> {
  const agent = folders.agent;
  if (agent.kind === "absent") return absentRead(false);
  if (agent.kind === "symlink") {
    return unreadableRead(true, {
      message: "agent/ is a symbolic link, which verbatim does not follow",
    });
  }
  if (agent.kind !== "folder") return unreadableRead(true, { message: "agent/ is not a folder" });
  if (folders.images.kind === "symlink") {
    return unreadableRead(true, {
      message: "agent/images is a symbolic link, which verbatim does not follow",
    });
  }
  const agentFolder = agent.folder;
  const conversationPath = agentFolder.entry(CONVERSATION_FILE);

  let file;
  try {
    file = await entryAt(conversationPath);
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
  const read = await readConversationFile(conversationPath);
  if (read === undefined) {
    return unreadableRead(true, { message: "agent/conversation.json cannot be read" });
  }
  const decoded = read.decoded;
  if (!decoded.ok) {
    return unreadableRead(true, {
      message: `agent/conversation.json cannot be read: ${decoded.reason.message}`,
      decode: decoded.reason,
    });
  }

  const disk = emptyDisk();
  disk.conversationFingerprint = read.fingerprint;
  const found = new Map<string, Uint8Array>();
  await readImages(folders, decoded.conversation, disk, found);
  const {
    conversation,
    images: bySha,
    omittedBlocks,
    droppedPendingImages,
  } = withImagesFound(decoded.conversation, found);
  const nothingToDo =
    omittedBlocks === 0 &&
    droppedPendingImages === 0 &&
    disk.otherImages.size === 0 &&
    disk.temporaries.size === 0;
  disk.canonicalAtOpen = nothingToDo && decoded.canonical === true;
  return {
    state: "readable",
    agentExists: true,
    conversation,
    images: bySha,
    unreadableImageBlocks: omittedBlocks,
    disk,
  };
}

/** Lists `agent/` and `agent/images/` and reads the images the conversation names (A15). */
async function readImages(
  folders: PackageFolders,
  saved: SavedConversation,
  disk: DiskState,
  found: Map<string, Uint8Array>,
): Promise<void> {
  const agent = folders.agent;
  if (agent.kind !== "folder") return;
  for (const name of (await listOwnedFiles(agent.folder.checkedPath)).temporaries) {
    disk.temporaries.add(name);
  }
  if (folders.images.kind !== "folder") return;
  const imagesFolder = folders.images.folder;
  disk.imagesFingerprint = imagesFolder.fingerprint;
  const owned = await listOwnedFiles(imagesFolder.checkedPath);
  for (const name of owned.images) disk.otherImages.add(name);
  for (const name of owned.temporaries) disk.temporaries.add(join(IMAGES_FOLDER, name));
  const wanted = [...referencedImageNames(saved)].filter(([name]) => disk.otherImages.has(name));
  await forEachLimited(wanted, READ_CONCURRENCY, async ([name, sha256]) => {
    const image = await readRegularFile(imagesFolder.entry(name));
    if (image === undefined || sha256Hex(image.bytes) !== sha256) return;
    found.set(name, image.bytes);
    disk.otherImages.delete(name);
    disk.verifiedImages.add(name);
  });
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
): {
  conversation: SavedConversation;
  images: Map<string, Uint8Array>;
  omittedBlocks: number;
  droppedPendingImages: number;
} {
  const images = new Map<string, Uint8Array>();
  let omittedBlocks = 0;
  let droppedPendingImages = 0;
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
      droppedPendingImages += message.images.length - kept.length;
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
    droppedPendingImages,
  };
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}
