import { fsyncFolder } from "./file-writer.js";
import { shownPath } from "./package-folders.js";

/** How many folders `flush` fsyncs at once (each on the thread pool). */
const PARALLEL_SYNCS = 8;

/**
 * The last folder fsyncs of many saves, done together (`OpenArchiveOptions.folderSyncs`, for
 * bulk work such as `verbatim import`; docs/archive.md, "Crash safety"). A save given a batch
 * still writes each file to a temporary file, fsyncs it and renames it over its name, and
 * fsyncs `images/` before `conversation.json` is renamed; only the fsync of the folders holding
 * its last renames (`agent/`, and the package folder when `agent/` is new) waits for `flush`,
 * unless the save then deletes images (those wait for the new conversation to be durable, as
 * without a batch). `flush` fsyncs every folder recorded since the last flush (each once,
 * several at a time on the thread pool) and returns when they all are durable. Until then a
 * power loss may undo a save whole (the package keeps its previous conversation and images, or
 * a new package is missing or empty), never leave part of one.
 */
export class FolderSyncBatch {
  private readonly folders = new Set<string>();

  /** Records a folder to fsync at the next flush (by its own path, not a descriptor path). */
  add(folder: string): void {
    this.folders.add(shownPath(folder));
  }

  /** The folders waiting for the next flush. */
  get waiting(): readonly string[] {
    return [...this.folders];
  }

  /** Fsyncs every recorded folder; rejects with the first failure (the others still run). */
  async flush(): Promise<void> {
    const folders = [...this.folders];
    this.folders.clear();
    let next = 0;
    const errors: unknown[] = [];
    const worker = async (): Promise<void> => {
      while (next < folders.length) {
        const folder = folders[next++] as string;
        await fsyncFolder(folder).catch((error: unknown) => errors.push(error));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_SYNCS, folders.length) }, worker));
    if (errors.length > 0) throw errors[0];
  }
}
