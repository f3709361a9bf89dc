import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fsync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  writevSync,
} from "node:fs";
import { open, rename, rmdir, unlink, type FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { join } from "node:path";
import { shownPath } from "./package-folders.js";

/**
 * The steps a save is made of. Each is announced to the step hook just before it happens, so
 * the crash test can stop a process at every one of them (docs/archive.md, "Crash safety").
 */
export type SaveStep =
  | "makeFolder"
  | "openTemporary"
  | "write"
  | "fsyncFile"
  | "rename"
  | "fsyncFolder"
  | "removeFile"
  | "removeFolder";

/** Called synchronously before each step, with the path it acts on. */
export type StepHook = (step: SaveStep, path: string) => void;

/** The file operations a save uses. `writeFile` must leave either the old file or the new one. */
export interface PackageFileWriter {
  /**
   * Puts `pieces` (concatenated) at `folder/name`; returns the bytes written. The pieces may be
   * made as they are consumed (a large conversation is encoded while it is written).
   */
  writeFile(folder: string, name: string, pieces: Iterable<Uint8Array>): Promise<number>;
  /** Makes the renames and removals in `folder` durable. */
  syncFolder(folder: string): Promise<void>;
  makeFolder(path: string): Promise<void>;
  removeFile(path: string): Promise<void>;
  removeFolder(path: string): Promise<void>;
}

export interface FileWriterOptions {
  readonly onStep?: StepHook;
  /** Largest piece written by one system call (steps inside large writes). Default 1 MiB. */
  readonly pieceBytes?: number;
}

const DEFAULT_PIECE_BYTES = 1024 * 1024;
/** writev takes at most this many buffers per call on Linux (IOV_MAX). */
const MAX_BUFFERS_PER_WRITE = 1024;

/** Groups pieces into writes of at most `pieceBytes` bytes and 1,024 buffers. */
export function* writeGroups(
  pieces: Iterable<Uint8Array>,
  pieceBytes: number,
): Generator<Uint8Array[]> {
  let group: Uint8Array[] = [];
  let groupBytes = 0;
  for (const piece of pieces) {
    let offset = 0;
    while (offset < piece.length) {
      const take = Math.min(piece.length - offset, pieceBytes - groupBytes);
      group.push(
        offset === 0 && take === piece.length ? piece : piece.subarray(offset, offset + take),
      );
      groupBytes += take;
      offset += take;
      if (groupBytes >= pieceBytes || group.length >= MAX_BUFFERS_PER_WRITE) {
        yield group;
        group = [];
        groupBytes = 0;
      }
    }
  }
  if (group.length > 0) yield group;
}

/**
 * Copies `pieces` into `staging` and yields how many bytes it holds each time it is full (and
 * at the end), so that each piece is dropped as soon as it is copied: pieces made as they are
 * consumed (a large conversation's encoding) then die young, and their memory goes back at the
 * engine's next minor collection instead of waiting for a full one (docs/archive.md, "Memory").
 */
export function* stagedWrites(pieces: Iterable<Uint8Array>, staging: Buffer): Generator<number> {
  let filled = 0;
  for (const piece of pieces) {
    let offset = 0;
    while (offset < piece.length) {
      const take = Math.min(piece.length - offset, staging.length - filled);
      staging.set(piece.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === staging.length) {
        yield filled;
        filled = 0;
      }
    }
  }
  if (filled > 0) yield filled;
}

/** What is left of `buffers` after a write took their first `written` bytes. */
function unwritten(buffers: readonly Uint8Array[], written: number): Uint8Array[] {
  let skip = written;
  const rest: Uint8Array[] = [];
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}

/** Writes all of `buffers` at the handle's position, looping over short writes. */
export async function writeAll(handle: FileHandle, buffers: Uint8Array[]): Promise<void> {
  let remaining = buffers;
  for (;;) {
    const total = remaining.reduce((sum, buffer) => sum + buffer.length, 0);
    if (total === 0) return;
    const { bytesWritten } = await handle.writev(remaining);
    if (bytesWritten >= total) return;
    remaining = unwritten(remaining, bytesWritten);
  }
}

/** `writeAll` with a direct call, on a descriptor. */
function writeAllNow(descriptor: number, buffers: readonly Uint8Array[]): void {
  let remaining = buffers;
  for (;;) {
    const total = remaining.reduce((sum, buffer) => sum + buffer.length, 0);
    if (total === 0) return;
    const written = writevSync(descriptor, remaining);
    if (written >= total) return;
    remaining = unwritten(remaining, written);
  }
}

/** fsync of a descriptor on the thread pool (the one step of a small write that waits for the disk). */
const fsyncDescriptor = promisify(fsync);

/**
 * Up to this many bytes, a file the pieces of which are already made is written with direct
 * calls (open, write, close, rename), only its fsync going through the thread pool: each round
 * trip through the pool costs more than such a call (docs/archive.md, "Crash safety").
 */
const DIRECT_WRITE_BYTES = 1024 * 1024;

export function temporaryFileName(): string {
  return `.verbatim-${randomBytes(8).toString("hex")}.tmp`;
}

/**
 * The writer every save uses: each file is written to a temporary file in the same folder,
 * fsynced, closed, then renamed over its name (atomic on POSIX file systems); folders are
 * fsynced after renames so the new names survive a power loss.
 */
export function atomicFileWriter(options: FileWriterOptions = {}): PackageFileWriter {
  const onStep = options.onStep;
  // The hook sees the paths of the package (not the open-folder paths the writer is given).
  const step: StepHook =
    onStep === undefined ? () => {} : (name, path) => onStep(name, shownPath(path));
  const pieceBytes = options.pieceBytes ?? DEFAULT_PIECE_BYTES;
  /** `writeFile` for a small file whose pieces are made: the same steps, fewer round trips. */
  async function writeSmallFile(
    folder: string,
    name: string,
    pieces: readonly Uint8Array[],
    length: number,
  ): Promise<number> {
    const temporary = join(folder, temporaryFileName());
    step("openTemporary", temporary);
    const descriptor = openSync(temporary, "wx");
    try {
      for (const group of writeGroups(pieces, pieceBytes)) {
        step("write", temporary);
        writeAllNow(descriptor, group);
      }
      step("fsyncFile", temporary);
      await fsyncDescriptor(descriptor);
    } catch (error) {
      try {
        closeSync(descriptor);
        unlinkSync(temporary);
      } catch {
        // The first failure is the one reported.
      }
      throw error;
    }
    closeSync(descriptor);
    const target = join(folder, name);
    step("rename", target);
    try {
      renameSync(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
    return length;
  }

  return {
    async writeFile(folder, name, pieces) {
      if (Array.isArray(pieces)) {
        let length = 0;
        for (const piece of pieces as readonly Uint8Array[]) length += piece.length;
        if (length <= DIRECT_WRITE_BYTES) {
          return writeSmallFile(folder, name, pieces as readonly Uint8Array[], length);
        }
      }
      const temporary = join(folder, temporaryFileName());
      step("openTemporary", temporary);
      const handle = await open(temporary, "wx");
      let written = 0;
      try {
        if (Array.isArray(pieces)) {
          // Pieces already made (a conversation's encoding, an image): written as they are, a
          // few at a time (no copy).
          for (const group of writeGroups(pieces as readonly Uint8Array[], pieceBytes)) {
            step("write", temporary);
            await writeAll(handle, group);
            for (const piece of group) written += piece.length;
          }
        } else {
          const staging = Buffer.allocUnsafe(pieceBytes);
          for (const filled of stagedWrites(pieces, staging)) {
            step("write", temporary);
            await writeAll(handle, [staging.subarray(0, filled)]);
            written += filled;
          }
        }
        step("fsyncFile", temporary);
        await handle.sync();
      } catch (error) {
        await handle.close().catch(() => {});
        await unlink(temporary).catch(() => {});
        throw error;
      }
      await handle.close();
      const target = join(folder, name);
      step("rename", target);
      try {
        await rename(temporary, target);
      } catch (error) {
        await unlink(temporary).catch(() => {});
        throw error;
      }
      return written;
    },
    async syncFolder(folder) {
      step("fsyncFolder", folder);
      await fsyncFolder(folder);
    },
    async makeFolder(path) {
      step("makeFolder", path);
      // A direct call: cheaper than the thread pool's round trip.
      mkdirSync(path);
    },
    async removeFile(path) {
      step("removeFile", path);
      await unlink(path);
    },
    async removeFolder(path) {
      step("removeFolder", path);
      await rmdir(path);
    },
  };
}

/** Makes the renames and removals in `folder` durable (fsync of the folder itself). */
export async function fsyncFolder(folder: string): Promise<void> {
  // Opened and closed with direct calls; only the fsync waits on the thread pool.
  const descriptor = openSync(folder, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  try {
    await fsyncDescriptor(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
