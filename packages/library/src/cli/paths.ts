import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { VerbatimError } from "../core/errors.js";

/** Reads a file named on the command line; a missing or unreadable path is `path_not_found`. */
export async function readInputFile(cwd: string, path: string): Promise<Buffer> {
  try {
    return await readFile(resolve(cwd, path));
  } catch (error) {
    throw new VerbatimError(
      "path_not_found",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        where: resolve(cwd, path),
        hint: "Check the path and its permissions",
      },
    );
  }
}

/** Checks that a folder named on the command line exists. */
export async function requireFolder(cwd: string, path: string): Promise<string> {
  const full = resolve(cwd, path);
  try {
    const info = await stat(full);
    if (info.isDirectory()) return full;
  } catch {
    // reported below
  }
  throw new VerbatimError("path_not_found", `${path} is not a folder`, {
    where: full,
    hint: "Name an existing package folder",
  });
}
