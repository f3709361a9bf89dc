import { readdir } from "node:fs/promises";
import { entryAt } from "./disk.js";
import type { PackageFileWriter } from "./file-writer.js";
import { AGENT_FOLDER, CONVERSATION_FILE } from "./layout.js";
import { unsafePath, type OpenFolder, type PackageFolders } from "./package-folders.js";

/**
 * Removes `agent/` (A4, A14, A17): `conversation.json` first (so an interrupted removal opens
 * as a package without a conversation, A13, with no notice), then every other regular file and
 * folder inside. Symbolic links are neither followed nor deleted; a folder that still holds one
 * stays. Every folder is listed and emptied through its open descriptor (package-folders.ts).
 * Returns false when there was no `agent/`.
 */
export async function removeAgentFolder(
  folders: PackageFolders,
  writer: PackageFileWriter,
): Promise<boolean> {
  const agent = folders.agent;
  if (agent.kind === "absent") return false;
  if (agent.kind === "symlink") throw unsafePath(agent.shown, "is a symbolic link");
  if (agent.kind !== "folder") {
    await writer.removeFile(folders.root.entry(AGENT_FOLDER));
    return true;
  }
  const conversationPath = agent.folder.entry(CONVERSATION_FILE);
  const conversation = await entryAt(conversationPath);
  if (conversation.kind === "symlink") {
    throw unsafePath(`${agent.folder.shown}/${CONVERSATION_FILE}`, "is a symbolic link");
  }
  if (conversation.kind === "file" || conversation.kind === "other") {
    await writer.removeFile(conversationPath);
    await writer.syncFolder(agent.folder.checkedPath);
  }
  await removeContents(agent.folder, writer);
  await writer.removeFolder(folders.root.entry(AGENT_FOLDER)).catch(ignoreNotEmpty);
  return true;
}

/** Removes the regular files and folders under `folder`, leaving links (and what holds them). */
async function removeContents(folder: OpenFolder, writer: PackageFileWriter): Promise<void> {
  const entries = await readdir(folder.checkedPath, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      const child = folder.child(entry.name);
      if (child.kind !== "folder") continue; // replaced by a link (or removed) meanwhile
      try {
        await removeContents(child.folder, writer);
      } finally {
        child.folder.close();
      }
      await writer.removeFolder(folder.entry(entry.name)).catch(ignoreNotEmpty);
    } else {
      await writer.removeFile(folder.entry(entry.name)).catch(ignoreMissing);
    }
  }
}

function ignoreNotEmpty(error: unknown): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT" && code !== "ENOTDIR") {
    throw error;
  }
}

/** For `.catch`: a file that is already gone is not an error. */
export function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}
