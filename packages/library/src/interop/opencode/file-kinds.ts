import { basename, dirname, sep } from "node:path";

// Which files OpenCode writes, by name and place (docs/interop/opencode.md, "What it reads"):
// kept apart from the importer, so that listing files (source-names.ts) loads no importer.

/** OpenCode's SQLite database: `opencode.db` (or a channel's `opencode-<channel>.db`). */
export function isOpenCodeDatabaseName(name: string): boolean {
  return /^opencode(-[A-Za-z0-9._-]+)?\.db$/.test(name);
}

/**
 * A session file of OpenCode's JSON storage: `storage/session/<project>/ses_<id>.json` (its
 * messages and parts are found from it). `storage/session/info/` is OpenCode's first layout,
 * which holds other shapes; it is accepted, and the importer says it does not read it.
 */
export function isOpenCodeStorageSession(path: string): boolean {
  const project = dirname(path);
  const session = dirname(project);
  return (
    /^ses_[A-Za-z0-9_-]+\.json$/.test(basename(path)) &&
    basename(session) === "session" &&
    basename(dirname(session)) === "storage"
  );
}

/**
 * Whether a file found in a folder is one the OpenCode importer reads: the database, or a
 * storage session file. Export files (`opencode export <id>`, any name) are read when named
 * on the command line.
 */
export function acceptsOpenCodeFile(name: string, path: string): boolean {
  return isOpenCodeDatabaseName(name) || (path.includes(sep) && isOpenCodeStorageSession(path));
}
