import { constants, type Dirent, type Stats } from "node:fs";
import { lstatSync } from "node:fs";
import { lstat, open, readdir, type FileHandle } from "node:fs/promises";
import { isImageFileName, isTemporaryFileName } from "./layout.js";

/** What the archive last saw of a file or folder, to notice changes made by someone else. */
export interface Fingerprint {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export function sameFingerprint(a: Fingerprint | undefined, b: Fingerprint | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

export type EntryKind = "absent" | "file" | "folder" | "symlink" | "other";

/** What is at a path, without following a symbolic link. */
export async function entryAt(
  path: string,
): Promise<{ kind: EntryKind; fingerprint?: Fingerprint }> {
  try {
    const info = await lstat(path);
    const fingerprint = { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
    if (info.isSymbolicLink()) return { kind: "symlink", fingerprint };
    if (info.isDirectory()) return { kind: "folder", fingerprint };
    if (info.isFile()) return { kind: "file", fingerprint };
    return { kind: "other", fingerprint };
  } catch (error) {
    if (isMissing(error)) return { kind: "absent" };
    throw error;
  }
}

/**
 * `entryAt` without the thread-pool round trip: for the two metadata reads every save starts
 * with, where the round trip costs more than the call.
 */
export function entryAtNow(path: string): { kind: EntryKind; fingerprint?: Fingerprint } {
  try {
    const info = lstatSync(path);
    const fingerprint = { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
    if (info.isSymbolicLink()) return { kind: "symlink", fingerprint };
    if (info.isDirectory()) return { kind: "folder", fingerprint };
    if (info.isFile()) return { kind: "file", fingerprint };
    return { kind: "other", fingerprint };
  } catch (error) {
    if (isMissing(error)) return { kind: "absent" };
    throw error;
  }
}

export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Reads a regular file without following a symbolic link (O_NOFOLLOW; O_NONBLOCK, so a named
 * pipe swapped in never blocks the open): a link, a folder, a pipe or a missing file gives
 * undefined.
 */
export async function readRegularFile(
  path: string,
): Promise<{ bytes: Buffer; fingerprint: Fingerprint } | undefined> {
  return withRegularFile(path, undefined, async (handle, info) => ({
    bytes: await handle.readFile(),
    fingerprint: { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs },
  }));
}

/**
 * Runs `use` on the regular file at `path`, opened without following a symbolic link
 * (O_NOFOLLOW; O_NONBLOCK, so a named pipe swapped in never blocks the open), and closes it;
 * `otherwise` when it is not a regular file, cannot be opened, or `use` throws.
 */
async function withRegularFile<T>(
  path: string,
  otherwise: T,
  use: (handle: FileHandle, info: Stats) => Promise<T>,
): Promise<T> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return otherwise;
  }
  try {
    const info = await handle.stat();
    return info.isFile() ? await use(handle, info) : otherwise;
  } catch {
    return otherwise;
  } finally {
    await handle.close();
  }
}

/**
 * The regular files of a folder the archive may touch: images with a valid name and temporary
 * files left by an interrupted save. Anything else (other names, links, folders) is ignored.
 */
export async function listOwnedFiles(
  folder: string,
): Promise<{ images: Set<string>; temporaries: Set<string> }> {
  const images = new Set<string>();
  const temporaries = new Set<string>();
  let entries: Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return { images, temporaries };
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    if (isImageFileName(entry.name)) images.add(entry.name);
    else if (isTemporaryFileName(entry.name)) temporaries.add(entry.name);
  }
  return { images, temporaries };
}

/** Runs `task` over `values` with at most `limit` at a time. */
export async function forEachLimited<T>(
  values: readonly T[],
  limit: number,
  task: (value: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, values.length) }, async () => {
    while (next < values.length) {
      const value = values[next++] as T;
      await task(value);
    }
  });
  await Promise.all(workers);
}

const COMPARE_CHUNK_BYTES = 1024 * 1024;

/**
 * True when the regular file at `path` (not followed if a link) holds exactly the pieces,
 * concatenated; read in 1 MiB chunks, so no copy of the file is kept.
 */
export async function fileEqualsPieces(path: string, pieces: readonly Buffer[]): Promise<boolean> {
  let total = 0;
  for (const piece of pieces) total += piece.length;
  return withRegularFile(path, false, async (handle, info) => {
    if (info.size !== total) return false;
    const chunk = Buffer.allocUnsafe(Math.min(COMPARE_CHUNK_BYTES, Math.max(total, 1)));
    let position = 0;
    let pieceIndex = 0;
    let pieceOffset = 0;
    while (position < total) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return false;
      let checked = 0;
      while (checked < bytesRead) {
        const piece = pieces[pieceIndex] as Buffer;
        const take = Math.min(piece.length - pieceOffset, bytesRead - checked);
        if (
          Buffer.compare(
            piece.subarray(pieceOffset, pieceOffset + take),
            chunk.subarray(checked, checked + take),
          ) !== 0
        ) {
          return false;
        }
        checked += take;
        pieceOffset += take;
        if (pieceOffset === piece.length) {
          pieceIndex++;
          pieceOffset = 0;
        }
      }
      position += bytesRead;
    }
    return true;
  });
}

/**
 * `fileEqualsPieces` for pieces made as they are consumed: each is compared with the file's
 * bytes at its place as it comes, and the walk stops at the first difference.
 */
export async function fileEqualsStream(path: string, pieces: Iterable<Buffer>): Promise<boolean> {
  return withRegularFile(path, false, async (handle, info) => {
    let chunk = Buffer.allocUnsafe(COMPARE_CHUNK_BYTES);
    let position = 0;
    for (const piece of pieces) {
      if (position + piece.length > info.size) return false;
      if (chunk.length < piece.length) chunk = Buffer.allocUnsafe(piece.length);
      let filled = 0;
      while (filled < piece.length) {
        const { bytesRead } = await handle.read(
          chunk,
          filled,
          piece.length - filled,
          position + filled,
        );
        if (bytesRead === 0) return false;
        filled += bytesRead;
      }
      if (piece.compare(chunk, 0, piece.length) !== 0) return false;
      position += piece.length;
    }
    return position === info.size;
  });
}
