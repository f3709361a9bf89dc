import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { join } from "node:path";
import { VerbatimError } from "../core/errors.js";
import { isMissing, type Fingerprint } from "./disk.js";
import { AGENT_FOLDER, IMAGES_FOLDER } from "./layout.js";

/**
 * The folders of a package reached without ever following a symbolic link under the package
 * (docs/archive.md, "Path safety"). Each folder is opened once (`O_DIRECTORY | O_NOFOLLOW`,
 * after an `lstat`), and every path inside it goes through the open folder: on Linux
 * `/proc/self/fd/<fd>/<name>`, which resolves to the folder that was opened even if a link is
 * swapped in at `agent/` or `agent/images/` afterwards. Where the system has no such path, the
 * folder's own path is used and checked (`lstat`, same inode as the open folder) each time a path
 * inside it is formed.
 */

let descriptorPaths = descriptorPathsWork();

/**
 * Turns descriptor paths off (or back on where the system has them): for the tests of the
 * fallback, which must hold on systems without `/proc/self/fd`.
 */
export function useDescriptorPaths(on: boolean): void {
  descriptorPaths = on && descriptorPathsWork();
}

function descriptorPathsWork(): boolean {
  try {
    return lstatSync("/proc/self/fd").isDirectory();
  } catch {
    return false;
  }
}

const FOLDER_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);
const CHILD_FOLDER_FLAGS = FOLDER_FLAGS | constants.O_NOFOLLOW;

/** The paths handed to file-system calls, by the path shown to people (for error messages). */
const shownPaths = new Map<string, string>();

/** The path to show people for a path the archive used (`/proc/self/fd/…` mapped back). */
export function shownPath(path: string): string {
  for (const [through, shown] of shownPaths) {
    if (path === through) return shown;
    if (path.startsWith(through + "/")) return shown + path.slice(through.length);
  }
  return path;
}

function fingerprintOf(info: Stats): Fingerprint {
  return { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
}

/** A folder of the package, open. */
export class OpenFolder {
  /** The path through which the folder's entries are reached. */
  readonly path: string;

  private constructor(
    private readonly descriptor: number,
    /** The folder's own path, for messages. */
    readonly shown: string,
    private readonly identity: Stats,
  ) {
    this.path = descriptorPaths ? `/proc/self/fd/${descriptor}` : shown;
    shownPaths.set(this.path, shown);
  }

  /** Opens a folder by path (the package folder itself: a link given by the caller is fine). */
  static openPath(path: string): OpenFolder {
    const descriptor = openSync(path, FOLDER_FLAGS);
    return new OpenFolder(descriptor, path, fstatSync(descriptor));
  }

  get fingerprint(): Fingerprint {
    return fingerprintOf(fstatSync(this.descriptor));
  }

  /** `path`, checked first when it is the folder's own path (see the file's comment). */
  get checkedPath(): string {
    if (this.path === this.shown) this.checkStillHere();
    return this.path;
  }

  /** The path of an entry of this folder. */
  entry(name: string): string {
    if (this.path === this.shown) this.checkStillHere();
    return join(this.path, name);
  }

  /**
   * The child folder `name`: never through a link. `symlink` when a link is there (or was
   * swapped in between the look and the open), `other` for anything but a folder.
   */
  child(name: string): FolderLookup {
    const path = this.entry(name);
    const shown = join(this.shown, name);
    let info: Stats;
    try {
      info = lstatSync(path);
    } catch (error) {
      if (isMissing(error)) return { kind: "absent" };
      throw error;
    }
    if (info.isSymbolicLink()) return { kind: "symlink", shown };
    if (!info.isDirectory()) return { kind: "other", shown };
    let descriptor: number;
    try {
      descriptor = openSync(path, CHILD_FOLDER_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "absent" };
      if (code === "ELOOP" || code === "ENOTDIR") return { kind: "symlink", shown };
      throw error;
    }
    return { kind: "folder", folder: new OpenFolder(descriptor, shown, fstatSync(descriptor)) };
  }

  close(): void {
    if (shownPaths.get(this.path) === this.shown) shownPaths.delete(this.path);
    closeSync(this.descriptor);
  }

  /** Without descriptor paths: the folder's path must still lead to the folder that was opened. */
  private checkStillHere(): void {
    let info: Stats | undefined;
    try {
      info = lstatSync(this.shown);
    } catch {
      info = undefined;
    }
    if (
      info === undefined ||
      !info.isDirectory() ||
      info.ino !== this.identity.ino ||
      info.dev !== this.identity.dev
    ) {
      throw unsafePath(this.shown, "was replaced while the archive was using it");
    }
  }
}

export type FolderLookup =
  | { readonly kind: "folder"; readonly folder: OpenFolder }
  | { readonly kind: "absent" }
  | { readonly kind: "symlink" | "other"; readonly shown: string };

export function unsafePath(path: string, what: string): VerbatimError {
  return new VerbatimError(
    "archive_unsafe_path",
    `${path} ${what}; verbatim neither follows nor replaces links under the package`,
    { where: path, hint: "Remove the link (or move it elsewhere) by hand, then save again" },
  );
}

/** The package folder, `agent/` and `agent/images/` as they are now, each open when a folder. */
export class PackageFolders {
  agent: FolderLookup;
  images: FolderLookup = { kind: "absent" };

  private constructor(readonly root: OpenFolder) {
    this.agent = root.child(AGENT_FOLDER);
    if (this.agent.kind === "folder") this.images = this.agent.folder.child(IMAGES_FOLDER);
  }

  static open(packageDir: string): PackageFolders {
    const root = OpenFolder.openPath(packageDir);
    try {
      return new PackageFolders(root);
    } catch (error) {
      root.close();
      throw error;
    }
  }

  /** `agent/`, open; throws `archive_unsafe_path` when a link or a non-folder is there. */
  agentFolder(): OpenFolder | undefined {
    return requireFolder(this.agent);
  }

  /** `agent/images/`, open; throws `archive_unsafe_path` when a link or a non-folder is there. */
  imagesFolder(): OpenFolder | undefined {
    return requireFolder(this.images);
  }

  /**
   * Looks again at what was absent (after the archive created a folder). Folders already open
   * stay open, so paths formed through them stay valid.
   */
  refresh(): void {
    if (this.agent.kind === "absent") this.agent = this.root.child(AGENT_FOLDER);
    if (this.agent.kind === "folder" && this.images.kind === "absent") {
      this.images = this.agent.folder.child(IMAGES_FOLDER);
    }
  }

  close(): void {
    this.closeChildren();
    this.root.close();
  }

  private closeChildren(): void {
    if (this.images.kind === "folder") this.images.folder.close();
    if (this.agent.kind === "folder") this.agent.folder.close();
    this.images = { kind: "absent" };
    this.agent = { kind: "absent" };
  }
}

function requireFolder(lookup: FolderLookup): OpenFolder | undefined {
  if (lookup.kind === "folder") return lookup.folder;
  if (lookup.kind === "absent") return undefined;
  throw unsafePath(
    lookup.shown,
    lookup.kind === "symlink" ? "is a symbolic link" : "is not a folder",
  );
}

/** Runs `task` with the package's folders open, and closes them after. */
export async function withPackageFolders<T>(
  packageDir: string,
  task: (folders: PackageFolders) => Promise<T>,
): Promise<T> {
  const folders = PackageFolders.open(packageDir);
  try {
    return await task(folders);
  } finally {
    folders.close();
  }
}
