import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { openArchive } from "../../archive/archive.js";
import { CONVERSATION_FILE, AGENT_FOLDER } from "../../archive/layout.js";
import { VerbatimError } from "../../core/errors.js";
import { exportRowsFile } from "./export-rows.js";
import { exportLine, type ExportFormat, type ExportedPackage } from "./training-lines.js";

export type { ExportedPackage } from "./training-lines.js";

async function isPackage(path: string): Promise<boolean> {
  return (
    (await stat(join(path, AGENT_FOLDER, CONVERSATION_FILE)).catch(() => undefined))?.isFile() ===
    true
  );
}

/**
 * The packages named: a package folder itself, or each package folder directly inside a folder;
 * and stored-rows files (`*.jsonl`), exported one line per job turn.
 */
export async function findPackages(cwd: string, paths: readonly string[]): Promise<string[]> {
  const packages: string[] = [];
  for (const path of paths) {
    const full = resolve(cwd, path);
    if (full.endsWith(".jsonl") && (await stat(full).catch(() => undefined))?.isFile() === true) {
      packages.push(full);
      continue;
    }
    if (await isPackage(full)) {
      packages.push(full);
      continue;
    }
    const entries = await readdir(full, { withFileTypes: true }).catch(() => undefined);
    if (entries === undefined) {
      throw new VerbatimError(
        "path_not_found",
        `${path} is not a package folder nor a folder of packages`,
        {
          where: full,
          hint: "Name package folders (with agent/conversation.json) or a folder that holds them",
        },
      );
    }
    const inside: string[] = [];
    for (const entry of entries) {
      if (entry.isDirectory() && (await isPackage(join(full, entry.name))))
        inside.push(join(full, entry.name));
    }
    packages.push(...inside.sort());
  }
  return packages;
}

/** Each package's history as one line of the format, in the order given. */
export async function exportPackages(
  packages: readonly string[],
  format: ExportFormat,
  system: string | undefined,
): Promise<ExportedPackage[]> {
  const exported: ExportedPackage[] = [];
  for (const path of packages) {
    if (path.endsWith(".jsonl")) {
      exported.push(...(await exportRowsFile(path, format, system)));
      continue;
    }
    const opened = await openArchive(path);
    const unreadable = opened.notices.find((notice) => notice.kind === "unreadableConversation");
    if (unreadable !== undefined) {
      exported.push({
        path,
        line: undefined,
        reason: `its conversation cannot be read: ${unreadable.reason}`,
      });
      continue;
    }
    if (opened.conversation.history.length === 0) {
      exported.push({ path, line: undefined, reason: "its history is empty" });
      continue;
    }
    exported.push({
      path,
      line: exportLine(opened.conversation.history, format, {
        ...(system === undefined ? {} : { system }),
        images: (sha256) => opened.images.get(sha256),
      }),
    });
  }
  return exported;
}
