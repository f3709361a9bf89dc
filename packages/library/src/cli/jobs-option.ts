import { usageError, type Command } from "./command.js";

/** Where `--jobs` is refused: the targets it does not go with. */
export const JOBS_TARGET =
  "--jobs goes with Claude Code or Codex sessions imported into a package folder (--into <folder>) or a SQLite store (--into sqlite:<file>)";

/** `--jobs N`: a whole number of threads, at least 1. */
export function parseJobs(command: Command, text: string): number {
  const jobs = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(jobs) || jobs < 1) {
    throw usageError(
      command,
      `--jobs must be a whole number of threads, 1 or more (1 imports in one thread), got ${JSON.stringify(text)}`,
    );
  }
  return jobs;
}
