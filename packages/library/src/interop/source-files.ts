import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { VerbatimError } from "../core/errors.js";

/**
 * The files to import under the paths given: a file is taken as it is; a folder is searched
 * recursively for names `accept` takes (a user's `~/.claude/projects`, `~/.codex/sessions`).
 * Sorted, so that every run visits files in the same order.
 */
export async function listSourceFiles(
  cwd: string,
  paths: readonly string[],
  accept: (name: string) => boolean,
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
    else found.add(full);
  }
  return [...found].sort();
}

async function walk(
  folder: string,
  accept: (name: string) => boolean,
  found: Set<string>,
): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true });
  for (const entry of entries) {
    const full = join(folder, entry.name);
    if (entry.isDirectory()) await walk(full, accept, found);
    else if (entry.isFile() && accept(entry.name)) found.add(full);
  }
}
