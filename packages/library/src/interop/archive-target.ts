import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { openArchive } from "../archive/archive.js";
import type { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import { AGENT_FOLDER, CONVERSATION_FILE, IMAGE_BUDGET_BYTES } from "../archive/layout.js";
import type { SavedConversation } from "../format/conversation-schema.js";
import { isEmptyConversation } from "../format/empty.js";
import { IMPORTED_NOTICE_KIND, type ImportedConversation } from "./imported.js";
import { field, recordOf, stringOf } from "./json-access.js";

/**
 * What happened to one conversation: `imported` (a new package), `updated` (the source grew
 * since the last import), `unchanged` (already imported from the same bytes: nothing written),
 * `refused` (the package holds something else; nothing written).
 */
export type PackageOutcome = "imported" | "updated" | "unchanged" | "refused";

export interface PackageWrite {
  readonly name: string;
  readonly path: string;
  readonly outcome: PackageOutcome;
  readonly reason?: string;
  /** Images the archive's 20 MiB budget (A16) replaced by `imageOmitted` blocks. */
  readonly imagesOmitted: number;
}

interface ImportStamp {
  readonly source: string;
  readonly sourceId: string;
  readonly file: string | undefined;
  readonly sha256: string;
}

/** The import stamp of a saved conversation: its first item, an `imported` notice. */
export function importStampOf(conversation: SavedConversation): ImportStamp | undefined {
  const first = conversation.items[0];
  if (
    first?.type !== "notice" ||
    first.kind !== IMPORTED_NOTICE_KIND ||
    first.detail === undefined
  ) {
    return undefined;
  }
  let detail: unknown;
  try {
    detail = JSON.parse(first.detail);
  } catch {
    return undefined;
  }
  const record = recordOf(detail);
  const source = stringOf(field(record, "source"));
  const sourceId = stringOf(field(record, "sourceId"));
  const sha256 = stringOf(field(record, "sha256"));
  return source === undefined || sourceId === undefined || sha256 === undefined
    ? undefined
    : { source, sourceId, file: stringOf(field(record, "file")), sha256 };
}

function omittedImages(conversation: SavedConversation): number {
  let count = 0;
  for (const message of conversation.history) {
    for (const block of message.content) if (block.type === "imageOmitted") count++;
  }
  return count;
}

/**
 * A package that already holds this import (stamped with the same source, id, file and source
 * bytes), recognised from its `agent/conversation.json` parsed as JSON, without opening the
 * archive (which decodes, checks and freezes the whole conversation): what makes a re-run
 * cheap. Anything else, or anything unexpected (a link, a file that is not JSON, another
 * shape), gives undefined and the archive decides.
 */
export async function alreadyImported(
  path: string,
  imported: ImportedConversation,
): Promise<PackageWrite | undefined> {
  const agent = join(path, AGENT_FOLDER);
  const file = join(agent, CONVERSATION_FILE);
  try {
    // Looked at without the thread pool's round trip (and without an error when absent, the
    // case of every new package): cheaper than the call itself.
    const folder = lstatSync(agent, { throwIfNoEntry: false });
    if (folder?.isDirectory() !== true) return undefined;
    const entry = lstatSync(file, { throwIfNoEntry: false });
    if (entry?.isFile() !== true) return undefined;
    const conversation = JSON.parse(readFileSync(file, "utf8")) as SavedConversation;
    const stamp = conversation.formatVersion === 1 ? importStampOf(conversation) : undefined;
    if (
      stamp === undefined ||
      stamp.source !== imported.source ||
      stamp.sourceId !== imported.sourceId ||
      (stamp.file !== undefined && stamp.file !== basename(imported.file)) ||
      stamp.sha256 !== imported.sourceSha256
    ) {
      return undefined;
    }
    return {
      name: imported.name,
      path,
      outcome: "unchanged",
      imagesOmitted: omittedImages(conversation),
    };
  } catch {
    return undefined;
  }
}

/**
 * Saves an imported conversation as the package `<into>/<name>` through the archive (canonical
 * bytes, content-addressed images, the image budget). Idempotent: a package stamped with the
 * same source, id and source bytes is left as it is; a package holding any other conversation
 * is never overwritten. With `folderSyncs`, the folders whose entries the write changed (the
 * package's, and those holding folders it created) are fsynced at the batch's flush instead
 * of before this returns (the files themselves are fsynced before they are renamed).
 */
export async function writeImportedPackage(
  into: string,
  imported: ImportedConversation,
  folderSyncs?: FolderSyncBatch,
): Promise<PackageWrite> {
  const path = join(into, imported.name);
  const unchanged = await alreadyImported(path, imported);
  if (unchanged !== undefined) return unchanged;
  // A direct call: cheaper than the thread pool's round trip.
  const created = mkdirSync(path, { recursive: true });
  if (created !== undefined && folderSyncs !== undefined) {
    // Each new folder's entry is in its parent: the parents from the first one created down.
    const first = resolve(created);
    for (let folder = resolve(path); folder.length >= first.length; folder = dirname(folder))
      folderSyncs.add(dirname(folder));
  }
  const opened = await openArchive(
    path,
    folderSyncs === undefined ? { singleSave: true } : { folderSyncs, singleSave: true },
  );
  const base = { name: imported.name, path };
  const unreadable = opened.notices.find((notice) => notice.kind === "unreadableConversation");
  if (unreadable !== undefined) {
    return {
      ...base,
      outcome: "refused",
      reason: `the package's saved conversation cannot be read (${unreadable.reason}); it was left unchanged`,
      imagesOmitted: 0,
    };
  }
  let outcome: PackageOutcome = "imported";
  if (!isEmptyConversation(opened.conversation)) {
    const stamp = importStampOf(opened.conversation);
    if (
      stamp === undefined ||
      stamp.source !== imported.source ||
      stamp.sourceId !== imported.sourceId
    ) {
      return {
        ...base,
        outcome: "refused",
        reason: `the package already holds another conversation${stamp === undefined ? "" : ` (${stamp.source} ${stamp.sourceId})`}; it was left unchanged`,
        imagesOmitted: 0,
      };
    }
    if (stamp.file !== undefined && stamp.file !== basename(imported.file)) {
      return {
        ...base,
        outcome: "refused",
        reason: `the package holds ${stamp.source} ${stamp.sourceId} imported from another file (${stamp.file}); it was left unchanged`,
        imagesOmitted: 0,
      };
    }
    if (stamp.sha256 === imported.sourceSha256) {
      return { ...base, outcome: "unchanged", imagesOmitted: omittedImages(opened.conversation) };
    }
    outcome = "updated";
  }
  await opened.archive.save(imported.conversation, imported.images);
  let imageBytes = 0;
  for (const bytes of imported.images.values()) imageBytes += bytes.length;
  const imagesOmitted =
    imageBytes > IMAGE_BUDGET_BYTES ? omittedImages((await openArchive(path)).conversation) : 0;
  return { ...base, outcome, imagesOmitted };
}
