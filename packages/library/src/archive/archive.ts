import { resolve } from "node:path";
import { VerbatimError } from "../core/errors.js";
import { sha256Hex } from "../core/hash.js";
import type { SavedConversation } from "../format/conversation-schema.js";
import { emptyConversation, isEmptyConversation } from "../format/empty.js";
import { applyImageBudget, type BudgetResult } from "./budget.js";
import {
  entryAt,
  entryAtNow,
  fileEqualsPieces,
  fileEqualsStream,
  listOwnedFiles,
  sameFingerprint,
  type Fingerprint,
} from "./disk.js";
import { ConversationEncoder, samePieces, streamedPieces } from "./encoder.js";
import { freezeDecodedConversation, freezeSavedElements } from "./frozen-input.js";
import { atomicFileWriter, type PackageFileWriter } from "./file-writer.js";
import type { FolderSyncBatch } from "./folder-sync-batch.js";
import {
  AGENT_FOLDER,
  CONVERSATION_FILE,
  IMAGES_FOLDER,
  IMAGE_BUDGET_BYTES,
  packagePaths,
  type PackagePaths,
} from "./layout.js";
import { sameInput, snapshotInput, type InputSnapshot } from "./input-snapshot.js";
import { serialised } from "./lock.js";
import { withPackageFolders, type OpenFolder, type PackageFolders } from "./package-folders.js";
import { asSaveError, requirePackageFolder } from "./archive-errors.js";
import { emptyDisk, readAgentFolder, type DiskState } from "./read.js";
import { ignoreMissing, removeAgentFolder } from "./remove.js";

import type {
  ArchiveInternals,
  ArchiveNotice,
  ArchiveSettings,
  ConversationArchive,
  OpenArchiveOptions,
  OpenedArchive,
  PackageKind,
  SaveResult,
} from "./archive-types.js";

export { requirePackageFolder } from "./archive-errors.js";
export type {
  ArchiveInternals,
  ArchiveNotice,
  ArchiveSettings,
  ConversationArchive,
  OpenArchiveOptions,
  OpenedArchive,
  PackageKind,
  SaveOutcome,
  SaveResult,
} from "./archive-types.js";

const DEFAULT_SETTINGS: ArchiveSettings = { keepConversation: true };

/**
 * From this size of `conversation.json` on, a save encodes the conversation while writing it
 * and keeps no encoded copy (docs/archive.md, "Memory"): below it, the encoder keeps each
 * element's bytes so that a save encodes only what changed.
 */
export const STREAMED_SAVE_BYTES = 64 * 1024 * 1024;

export const UNREADABLE_NOTICE_TEXT =
  "The saved agent conversation could not be read, so the panel starts empty. The agent/ folder is kept unchanged until a turn runs (it is then replaced) or a new conversation is started (it is then deleted).";

/**
 * Opens the archive of a package folder (A13–A15, A17). Never throws for anything inside
 * `agent/`; throws `archive_package_unreadable` only when the package folder itself cannot be
 * read.
 */
export async function openArchive(
  packageDir: string,
  options: OpenArchiveOptions = {},
): Promise<OpenedArchive> {
  return openArchiveWith(packageDir, options, {});
}

export async function openArchiveWith(
  packageDir: string,
  options: OpenArchiveOptions,
  internals: ArchiveInternals,
): Promise<OpenedArchive> {
  const paths = packagePaths(resolve(packageDir));
  await requirePackageFolder(paths.packageDir);
  const kind = options.kind ?? "document";
  const settings = options.settings ?? (() => DEFAULT_SETTINGS);
  const archive = new PackageArchive(
    paths,
    kind,
    settings,
    options.onChangedWithoutUndo,
    internals,
    options.folderSyncs,
    options.singleSave === true,
  );
  if (kind !== "document" || !settings().keepConversation) {
    return { archive, conversation: emptyConversation(), images: new Map(), notices: [] };
  }
  const read = await readAgentFolder(paths);
  archive.restore(read.disk, read.conversation, read.images, read.state === "unreadable");
  const notices: ArchiveNotice[] =
    read.unreadable === undefined
      ? []
      : [
          {
            kind: "unreadableConversation",
            text: UNREADABLE_NOTICE_TEXT,
            reason: read.unreadable.message,
          },
        ];
  return { archive, conversation: read.conversation, images: read.images, notices };
}

class PackageArchive implements ConversationArchive {
  private preserving = false;
  private disk: DiskState = emptyDisk();
  private previousPieces: Buffer[] | undefined;
  /** What the last save that reached the disk state was given (unchanged saves stop early). */
  private lastInput: InputSnapshot | undefined;
  /** What the open returned, when the file it read was found canonical (see `restore`). */
  private openSnapshot: InputSnapshot | undefined;
  private encoder = new ConversationEncoder();
  private readonly copies = new WeakMap<object, { key: string; copy: object }>();
  /** Image bytes already hashed, by identity: each image is hashed once. */
  private readonly hashed = new WeakMap<Uint8Array, string>();
  private readonly writer: PackageFileWriter;
  private readonly budgetBytes: number;
  private readonly streamedSaveBytes: number;

  constructor(
    private readonly paths: PackagePaths,
    private readonly kind: PackageKind,
    private readonly settings: () => ArchiveSettings,
    private readonly hook: (() => void) | undefined,
    internals: ArchiveInternals,
    private readonly folderSyncs: FolderSyncBatch | undefined,
    /** OpenArchiveOptions.singleSave: nothing is frozen or kept for a next save. */
    private readonly singleSave = false,
  ) {
    this.writer = internals.writer ?? atomicFileWriter();
    this.budgetBytes = internals.budgetBytes ?? IMAGE_BUDGET_BYTES;
    this.streamedSaveBytes = internals.streamedSaveBytes ?? STREAMED_SAVE_BYTES;
  }

  get preservingUnreadable(): boolean {
    return this.preserving;
  }

  restore(
    disk: DiskState,
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
    unreadable: boolean,
  ): void {
    this.disk = disk;
    this.preserving = unreadable;
    let imageBytes = 0;
    for (const [sha256, bytes] of images) {
      this.hashed.set(bytes, sha256);
      imageBytes += bytes.length;
    }
    // What was read is on disk, canonical (found while decoding it), with every image and
    // nothing to clean up: it is what a save of that same conversation would leave, so that
    // save writes nothing, however soon it comes (unless the budget would drop an image).
    const canonical = disk.canonicalAtOpen;
    disk.canonicalAtOpen = false;
    if (!canonical || imageBytes > this.budgetBytes || this.singleSave) return;
    freezeDecodedConversation(conversation);
    this.openSnapshot = snapshotInput(conversation, images);
  }

  turnStarted(): void {
    this.preserving = false;
  }

  newConversationConfirmed(): void {
    this.preserving = false;
  }

  changedWithoutUndo(): void {
    if (this.kind !== "document" || !this.settings().keepConversation) return;
    this.hook?.();
  }

  save(
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
  ): Promise<SaveResult> {
    // Elements the last save (or the open) already took in are frozen; an unchanged save
    // recognises them by identity and walks nothing else.
    let sameAsLast: InputSnapshot | undefined;
    if (!this.singleSave) {
      const reference = this.lastInput ?? this.openSnapshot;
      const asReference = reference !== undefined && sameInput(conversation, images, reference);
      if (!asReference) freezeSavedElements(conversation, reference);
      sameAsLast = asReference ? reference : undefined;
    }
    return serialised(this.paths.packageDir, async () => {
      try {
        if (this.kind !== "document") return { outcome: "skipped", bytesWritten: 0 };
        if (this.settings().keepConversation && this.preserving) {
          return { outcome: "kept", bytesWritten: 0 };
        }
        return await withPackageFolders(this.paths.packageDir, (folders) =>
          this.saveNow(folders, conversation, images, sameAsLast),
        );
      } catch (error) {
        throw asSaveError(error);
      }
    });
  }

  /** `sameAsLast`: the snapshot the input was found identical to when `save` was called. */
  private async saveNow(
    folders: PackageFolders,
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
    sameAsLast: InputSnapshot | undefined,
  ): Promise<SaveResult> {
    if (!this.settings().keepConversation) {
      this.preserving = false;
      return { outcome: (await this.remove(folders)) ? "removed" : "skipped", bytesWritten: 0 };
    }
    if (this.preserving) return { outcome: "kept", bytesWritten: 0 };
    if (isEmptyConversation(conversation)) {
      return { outcome: (await this.remove(folders)) ? "removed" : "unchanged", bytesWritten: 0 };
    }
    return this.write(folders, conversation, images, sameAsLast);
  }

  /**
   * The first save after opening knows the conversation as saved when it is given what the
   * open returned; a save of anything else compares with the file (a streamed save would
   * otherwise take other objects for other content and rewrite the file without comparing).
   */
  private takeOpenSnapshot(sameAsLast: InputSnapshot | undefined): void {
    const snapshot = this.openSnapshot;
    this.openSnapshot = undefined;
    if (snapshot !== undefined && sameAsLast === snapshot && this.lastInput === undefined) {
      this.lastInput = snapshot;
    }
  }

  private async remove(folders: PackageFolders): Promise<boolean> {
    this.openSnapshot = undefined;
    const removed = await removeAgentFolder(folders, this.writer);
    this.disk = emptyDisk();
    this.previousPieces = undefined;
    this.lastInput = undefined;
    return removed;
  }

  /**
   * Notices changes made by someone else since the last save, and forgets what they undo.
   * Returns true when `agent/` is as the archive left it. Throws `archive_unsafe_path`, before
   * anything is read, listed or deleted, when `agent/`, `agent/images/` or
   * `agent/conversation.json` is a symbolic link.
   */
  private async refreshDisk(folders: PackageFolders): Promise<boolean> {
    const agent = folders.agentFolder();
    const imagesFolder = folders.imagesFolder();
    const file =
      agent === undefined
        ? { kind: "absent" as const }
        : entryAtNow(agent.entry(CONVERSATION_FILE));
    if (file.kind === "symlink") {
      throw new VerbatimError(
        "archive_unsafe_path",
        "agent/conversation.json is a symbolic link; verbatim neither follows nor replaces links",
        { where: this.paths.conversationFile, hint: "Remove the link by hand, then save again" },
      );
    }
    const imagesFingerprint: Fingerprint | undefined = imagesFolder?.fingerprint;
    const disk = this.disk;
    if (
      sameFingerprint(file.fingerprint, disk.conversationFingerprint) &&
      sameFingerprint(imagesFingerprint, disk.imagesFingerprint)
    ) {
      return true;
    }
    this.previousPieces = undefined;
    this.lastInput = undefined;
    disk.conversationFingerprint = file.fingerprint;
    disk.imagesFingerprint = imagesFingerprint;
    const owned =
      imagesFolder === undefined
        ? { images: new Set<string>(), temporaries: new Set<string>() }
        : await listOwnedFiles(imagesFolder.checkedPath);
    for (const name of disk.verifiedImages) {
      if (!owned.images.has(name)) disk.verifiedImages.delete(name);
    }
    disk.otherImages.clear();
    for (const name of owned.images) {
      if (!disk.verifiedImages.has(name)) disk.otherImages.add(name);
    }
    for (const name of owned.temporaries) disk.temporaries.add(`${IMAGES_FOLDER}/${name}`);
    if (agent !== undefined) {
      for (const name of (await listOwnedFiles(agent.checkedPath)).temporaries) {
        disk.temporaries.add(name);
      }
    }
    return false;
  }

  private budget(
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
    blocked: ReadonlySet<string>,
  ): BudgetResult {
    return applyImageBudget(conversation, images, {
      budgetBytes: this.budgetBytes,
      canStore: (name) => !blocked.has(name),
      // The copies are kept by identity for the next save: not with unfrozen input.
      copies: this.singleSave ? new WeakMap() : this.copies,
    });
  }

  private async write(
    folders: PackageFolders,
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
    sameAsLast: InputSnapshot | undefined,
  ): Promise<SaveResult> {
    this.takeOpenSnapshot(sameAsLast);
    const diskAsLeft = await this.refreshDisk(folders);
    if (
      diskAsLeft &&
      this.lastInput !== undefined &&
      (sameAsLast === this.lastInput || sameInput(conversation, images, this.lastInput))
    ) {
      return { outcome: "unchanged", bytesWritten: 0 };
    }
    const disk = this.disk;
    let budget = this.budget(conversation, images, new Set());
    const toWrite = (): string[] =>
      [...budget.images.keys()].filter((name) => !disk.verifiedImages.has(name));
    const blocked = await this.blockedNames(folders, toWrite());
    if (blocked.size > 0) budget = this.budget(conversation, images, blocked);
    this.verifyImages(budget);

    // A large conversation is encoded while it is written, and no encoded copy is kept.
    const streamed = (disk.conversationFingerprint?.size ?? 0) >= this.streamedSaveBytes;
    if (streamed) {
      this.previousPieces = undefined;
      this.encoder = new ConversationEncoder();
    }
    // One save only: the canonical text in a few large pieces, nothing kept per element.
    const pieces = streamed
      ? undefined
      : this.singleSave
        ? [...streamedPieces(budget.conversation)]
        : this.encoder.encode(budget.conversation);
    const agentBefore = folders.agentFolder();
    const conversationChanged =
      this.previousPieces !== undefined && pieces !== undefined
        ? !samePieces(pieces, this.previousPieces)
        : disk.conversationFingerprint === undefined ||
          agentBefore === undefined ||
          // Streamed, with the file as the last save left it: the input differs from that
          // save's, so the file is written again without encoding it once more to compare.
          (pieces === undefined && this.lastInput !== undefined) ||
          !(await (pieces === undefined
            ? fileEqualsStream(
                agentBefore.entry(CONVERSATION_FILE),
                streamedPieces(budget.conversation),
              )
            : fileEqualsPieces(agentBefore.entry(CONVERSATION_FILE), pieces)));
    const newImages = toWrite();
    const staleImages = [...disk.verifiedImages, ...disk.otherImages].filter(
      (name) => !budget.images.has(name),
    );
    await this.removeTemporaries(folders);
    if (!conversationChanged && newImages.length === 0 && staleImages.length === 0) {
      this.remember(conversation, images, pieces);
      return { outcome: "unchanged", bytesWritten: 0 };
    }

    let bytesWritten = 0;
    const agent = await this.ensureFolder(folders, "agent");
    if (newImages.length > 0) {
      const imagesFolder = await this.ensureFolder(folders, "images");
      for (const name of newImages) {
        const image = budget.images.get(name);
        if (image === undefined) continue;
        bytesWritten += await this.writer.writeFile(imagesFolder.checkedPath, name, [image.bytes]);
        disk.otherImages.delete(name);
        disk.verifiedImages.add(name);
      }
      await this.writer.syncFolder(imagesFolder.checkedPath);
    }
    if (conversationChanged) {
      bytesWritten += await this.writer.writeFile(
        agent.checkedPath,
        CONVERSATION_FILE,
        pieces ?? streamedPieces(budget.conversation),
      );
      await this.syncLastFolder(agent.checkedPath, staleImages.length === 0);
    }
    if (this.createdAgent)
      await this.syncLastFolder(folders.root.checkedPath, staleImages.length === 0);
    const imagesFolder = folders.imagesFolder();
    for (const name of staleImages) {
      if (imagesFolder !== undefined) {
        await this.writer.removeFile(imagesFolder.entry(name)).catch(ignoreMissing);
      }
      disk.verifiedImages.delete(name);
      disk.otherImages.delete(name);
    }
    if (this.remember(conversation, images, pieces)) {
      const file = await entryAt(agent.entry(CONVERSATION_FILE));
      disk.conversationFingerprint = file.fingerprint;
      disk.imagesFingerprint = folders.imagesFolder()?.fingerprint;
    }
    return { outcome: "rewritten", bytesWritten };
  }

  /**
   * Keeps what the next save reuses (the pieces, the input's references); returns false when
   * the archive is for a single save: then nothing is kept, and the disk state is marked as
   * unknown, so that a later save looks at the disk again.
   */
  private remember(
    conversation: SavedConversation,
    images: ReadonlyMap<string, Uint8Array>,
    pieces: Buffer[] | undefined,
  ): boolean {
    if (this.singleSave) {
      this.disk.conversationFingerprint = undefined;
      this.disk.imagesFingerprint = undefined;
      return false;
    }
    this.previousPieces = pieces;
    this.lastInput = snapshotInput(conversation, images);
    return true;
  }

  /**
   * The fsync of a folder after the save's last rename: left to the caller's batch when there is
   * one and nothing is deleted after it (a deletion waits until the new conversation is durable).
   */
  private async syncLastFolder(folder: string, deferrable: boolean): Promise<void> {
    if (deferrable && this.folderSyncs !== undefined) this.folderSyncs.add(folder);
    else await this.writer.syncFolder(folder);
  }

  /** Names that something other than a regular file occupies: those images are not stored. */
  private async blockedNames(
    folders: PackageFolders,
    names: readonly string[],
  ): Promise<Set<string>> {
    const blocked = new Set<string>();
    if (names.length === 0) return blocked;
    const folder = folders.imagesFolder();
    if (folder === undefined) return blocked;
    for (const name of names) {
      const entry = await entryAt(folder.entry(name));
      if (entry.kind !== "absent" && entry.kind !== "file") blocked.add(name);
    }
    return blocked;
  }

  /** Each image is hashed once; bytes that do not hash to their key are refused before writing. */
  private verifyImages(budget: BudgetResult): void {
    for (const image of budget.images.values()) {
      if (this.hashed.get(image.bytes) === image.sha256) continue;
      const actual = sha256Hex(image.bytes);
      if (actual !== image.sha256) {
        throw new VerbatimError(
          "archive_image_mismatch",
          `the image filed under ${image.sha256} has bytes whose SHA-256 is ${actual}`,
          { where: `images.get("${image.sha256}")`, hint: "Key each image by its SHA-256" },
        );
      }
      this.hashed.set(image.bytes, actual);
    }
  }

  /** Set when the last `ensureFolder(…, "agent")` created `agent/`. */
  private createdAgent = false;

  /**
   * `agent/` or `agent/images/`, created when absent and opened without following links;
   * `archive_unsafe_path` when a link or something else than a folder is there.
   */
  private async ensureFolder(
    folders: PackageFolders,
    which: "agent" | "images",
  ): Promise<OpenFolder> {
    const existing = which === "agent" ? folders.agentFolder() : folders.imagesFolder();
    if (which === "agent") this.createdAgent = existing === undefined;
    if (existing !== undefined) return existing;
    const parent = which === "agent" ? folders.root : folders.agentFolder();
    if (parent === undefined) throw new Error("agent/ is created before agent/images/");
    await this.writer.makeFolder(parent.entry(which === "agent" ? AGENT_FOLDER : IMAGES_FOLDER));
    folders.refresh();
    const created = which === "agent" ? folders.agentFolder() : folders.imagesFolder();
    if (created === undefined) throw new Error(`${which} folder vanished right after creation`);
    return created;
  }

  private async removeTemporaries(folders: PackageFolders): Promise<void> {
    for (const name of this.disk.temporaries) {
      const inImages = name.startsWith(`${IMAGES_FOLDER}/`);
      const folder = inImages ? folders.imagesFolder() : folders.agentFolder();
      if (folder === undefined) continue;
      const entryName = inImages ? name.slice(IMAGES_FOLDER.length + 1) : name;
      await this.writer.removeFile(folder.entry(entryName)).catch(ignoreMissing);
    }
    this.disk.temporaries.clear();
  }
}
