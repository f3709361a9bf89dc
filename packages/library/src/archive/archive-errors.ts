import { statSync } from "node:fs";
import { VerbatimError, isVerbatimError } from "../core/errors.js";
import { shownPath } from "./package-folders.js";

/** The archive's two errors that are not about a path under the package (docs/errors.md). */

export async function requirePackageFolder(packageDir: string): Promise<void> {
  let problem: string;
  try {
    // A metadata read without the thread pool's round trip (which costs more than the call).
    const info = statSync(packageDir);
    if (info.isDirectory()) return;
    problem = "is not a folder";
  } catch (error) {
    problem = `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  throw new VerbatimError("archive_package_unreadable", `the package folder ${problem}`, {
    where: packageDir,
    hint: "Pass the path of an existing package folder that this process can read",
  });
}

/** A file-system error of a save as `archive_write_failed`, with the path people know. */
export function asSaveError(error: unknown): unknown {
  if (isVerbatimError(error)) return error;
  const system = error as NodeJS.ErrnoException;
  if (typeof system.code !== "string") return error;
  return new VerbatimError(
    "archive_write_failed",
    `the save could not finish: ${system.code} (${system.syscall ?? "file system"})`,
    {
      where: system.path === undefined ? "agent/" : shownPath(system.path),
      hint: "Fix the cause (space, permissions) and save again; the package still opens",
      cause: error,
    },
  );
}
