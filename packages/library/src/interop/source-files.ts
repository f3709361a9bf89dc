import { constants as bufferConstants } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { VerbatimError } from "../core/errors.js";

/**
 * The files to import under the paths given: a file is taken as it is; a folder is searched
 * recursively for files `accept` takes by name and full path (a user's `~/.claude/projects`,
 * `~/.codex/sessions`, `~/.local/share/opencode`).
 * Sorted, so that every run visits files in the same order.
 */
export async function listSourceFiles(
  cwd: string,
  paths: readonly string[],
  accept: (name: string, path: string) => boolean,
): Promise<string[]> {
  const found = new Set<string>();
  for (const path of paths) {
    const full = resolve(cwd, path);
    let info;
    try {
      info = await stat(full);
    } catch (error) {
      throw new VerbatimError(
        "path_not_found",
        `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        { where: full, hint: "Name existing files or folders to import" },
      );
    }
    if (info.isDirectory()) await walk(full, accept, found);
    // A link named on the command line is the user's choice: its target is read (never a
    // link found in a folder: readSourceFile does not follow links).
    else if ((await lstat(full)).isSymbolicLink()) found.add(await realpath(full));
    else found.add(full);
  }
  return [...found].sort();
}

async function walk(
  folder: string,
  accept: (name: string, path: string) => boolean,
  found: Set<string>,
): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true });
  for (const entry of entries) {
    const full = join(folder, entry.name);
    if (entry.isDirectory()) await walk(full, accept, found);
    else if (entry.isFile() && accept(entry.name, full)) found.add(full);
  }
}

/** A source file is decoded as one string: a larger file cannot be. */
export const SOURCE_FILE_MAX_BYTES = bufferConstants.MAX_STRING_LENGTH;

/** The bytes of a source file, or why it was not read (a reason a person can act on). */
export type SourceFileRead =
  | { readonly bytes: Uint8Array }
  | { readonly bytes?: undefined; readonly reason: string; readonly code?: string };

/**
 * Reads a file an import found (a session file, a sub-agent's `.meta.json`): without following
 * a link (a link would bring a file from outside the input folder into the output), only a
 * regular file (opening a FIFO or a device could wait for ever, so the open does not block),
 * and at most `maxBytes`. Synchronous: one direct read costs less than the thread pool's round
 * trips for a file in the page cache.
 */
export function readSourceFile(path: string, maxBytes = SOURCE_FILE_MAX_BYTES): SourceFileRead {
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return code === "ELOOP"
      ? { reason: `${NOT_READ} it is a symbolic link; ${NAME_TARGET}`, code }
      : { reason: code, code };
  }
  try {
    const info = fstatSync(descriptor);
    if (!info.isFile()) return { reason: `${NOT_READ} it is ${kindOf(info)}; ${NAME_TARGET}` };
    if (info.size > maxBytes) {
      return {
        reason: `${NOT_READ} it has ${info.size} bytes, more than the ${maxBytes} an import reads from such a file; split it or leave it out`,
      };
    }
    const bytes = Buffer.allocUnsafe(info.size);
    let read = 0;
    while (read < bytes.length) {
      const count = readSync(descriptor, bytes, read, bytes.length - read, null);
      if (count === 0) break;
      read += count;
    }
    return { bytes: bytes.subarray(0, read) };
  } catch (error) {
    return { reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    closeSync(descriptor);
  }
}

const NOT_READ = "not read:";
const NAME_TARGET = "only regular files are imported (name the file itself to import it)";

function kindOf(info: Stats): string {
  if (info.isDirectory()) return "a folder";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "not a regular file";
}
