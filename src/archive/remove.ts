import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { VerbatimError } from "../core/errors.js";
import { entryAt } from "./disk.js";
import type { PackageFileWriter } from "./file-writer.js";
import type { PackagePaths } from "./layout.js";

function linkInTheWay(path: string): VerbatimError {
  return new VerbatimError(
    "archive_unsafe_path",
    `${path} is a symbolic link; verbatim neither follows nor deletes links`,
    { where: path, hint: "Remove the link by hand, then save again" },
  );
}

/**
 * Removes `agent/` (A4, A14, A17): `conversation.json` first (so an interrupted removal opens
 * as a package without a conversation, A13, with no notice), then every other regular file and
 * folder inside. Symbolic links are neither followed nor deleted; a folder that still holds one
 * stays. Returns false when there was no `agent/`.
 */
export async function removeAgentFolder(
  paths: PackagePaths,
  writer: PackageFileWriter,
): Promise<boolean> {
  const agent = await entryAt(paths.agentDir);
  if (agent.kind === "absent") return false;
  if (agent.kind === "symlink") throw linkInTheWay(paths.agentDir);
  if (agent.kind !== "folder") {
    await writer.removeFile(paths.agentDir);
    return true;
  }
  const conversation = await entryAt(paths.conversationFile);
  if (conversation.kind === "symlink") throw linkInTheWay(paths.conversationFile);
  if (conversation.kind === "file" || conversation.kind === "other") {
    await writer.removeFile(paths.conversationFile);
    await writer.syncFolder(paths.agentDir);
  }
  await removeContents(paths.agentDir, writer);
  await writer.removeFolder(paths.agentDir).catch(ignoreNotEmpty);
  return true;
}

/** Removes the regular files and folders under `folder`, leaving links (and what holds them). */
async function removeContents(folder: string, writer: PackageFileWriter): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      await removeContents(path, writer);
      await writer.removeFolder(path).catch(ignoreNotEmpty);
    } else {
      await writer.removeFile(path).catch(ignoreMissing);
    }
  }
}

function ignoreNotEmpty(error: unknown): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw error;
}

/** For `.catch`: a file that is already gone is not an error. */
export function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}
