import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { sha256Hex } from "../../core/hash.js";
import { nestsTooDeep } from "../../core/json-depth.js";
import { readSourceFile } from "../source-files.js";

// The files of one Cline task folder (`<global storage>/tasks/<task id>/`), as Cline writes them
// (cline/cline src/core/storage/disk.ts, GlobalFileNames) and its forks Roo Code and Kilo Code
// (RooCodeInc/Roo-Code src/shared/globalFileNames.ts): the API history the extension sends, the
// UI's message list, the task's metadata, and (Roo Code 3.5x on) its history item.

/** The file of a task folder the import starts from: the history the extension sends. */
export const API_HISTORY_FILE = "api_conversation_history.json";
export const UI_MESSAGES_FILE = "ui_messages.json";
export const TASK_METADATA_FILE = "task_metadata.json";
/** Roo Code's per-task history item (parentTaskId, rootTaskId, mode, totals). */
export const HISTORY_ITEM_FILE = "history_item.json";

/** A side file of a task folder is small beside the histories: a larger one is not one. */
const SIDE_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** One JSON file of a task folder: its value, or why it is not there or not read. */
export type TaskJson =
  | { readonly file: string; readonly value: unknown; readonly reason?: undefined }
  | { readonly file: string; readonly value?: undefined; readonly reason: string };

export interface TaskFolder {
  readonly taskId: string;
  readonly folder: string;
  readonly apiFile: string;
  readonly api: TaskJson;
  /** Absent files are undefined (every one but the API history is optional). */
  readonly ui: TaskJson | undefined;
  readonly metadata: TaskJson | undefined;
  readonly historyItem: TaskJson | undefined;
  /** Files of the folder the import does not read (Cline's context_history.json, …). */
  readonly otherFiles: readonly string[];
  /** SHA-256 over every file read: a re-run with the same bytes changes nothing. */
  readonly sha256: string;
}

/** Files of a task folder the import knows and leaves out, and why. */
export const KNOWN_OTHER_FILES: Readonly<Record<string, string>> = {
  "context_history.json":
    "Cline's edits to earlier messages (duplicate file reads shortened) applied when a request is sent; the history is imported as saved, without them",
  "settings.json": "the task's settings (Cline), not conversation",
  "claude_messages.json": "the API history before Cline 2 renamed it; read only by old versions",
};

function parseJson(file: string, bytes: Uint8Array): TaskJson {
  let value: unknown;
  try {
    value = JSON.parse(utf8DecodeLenient(bytes));
  } catch (error) {
    return { file, reason: `not JSON (${(error as Error).message}): kept in the source only` };
  }
  if (nestsTooDeep(value)) return { file, reason: "nested too deep: kept in the source only" };
  return { file, value };
}

/**
 * The task folder of `file` (the API history, or any file the user named inside a task folder)
 * with its files read. `bytes` are the named file's, already read by the caller.
 */
export function readTaskFolder(file: string, bytes: Uint8Array): TaskFolder {
  const folder = dirname(file);
  const apiFile = join(folder, API_HISTORY_FILE);
  const hashes: string[] = [];
  let api: TaskJson;
  if (basename(file) === API_HISTORY_FILE) {
    hashes.push(sha256Hex(bytes));
    api = parseJson(apiFile, bytes);
  } else {
    const read = readSourceFile(apiFile);
    if (read.bytes === undefined) {
      api = {
        file: apiFile,
        reason: `no ${API_HISTORY_FILE} beside ${basename(file)} (${read.reason}): name a Cline task folder, its tasks/ folder or a file inside a task folder`,
      };
    } else {
      hashes.push(sha256Hex(read.bytes));
      api = parseJson(apiFile, read.bytes);
    }
  }
  const side = (name: string): TaskJson | undefined => {
    const path = join(folder, name);
    const read = readSourceFile(path, SIDE_FILE_MAX_BYTES);
    if (read.bytes === undefined) {
      return read.code === "ENOENT" ? undefined : { file: path, reason: read.reason };
    }
    hashes.push(`${name}:${sha256Hex(read.bytes)}`);
    return parseJson(path, read.bytes);
  };
  const ui = side(UI_MESSAGES_FILE);
  const metadata = side(TASK_METADATA_FILE);
  const historyItem = side(HISTORY_ITEM_FILE);
  const read = new Set([API_HISTORY_FILE, UI_MESSAGES_FILE, TASK_METADATA_FILE, HISTORY_ITEM_FILE]);
  const otherFiles = filesIn(folder).filter((name) => !read.has(name));
  return {
    taskId: basename(folder),
    folder,
    apiFile,
    api,
    ui,
    metadata,
    historyItem,
    otherFiles,
    sha256: sha256Hex(hashes.join("\n")),
  };
}

/** The regular files of a folder (none when it cannot be listed). */
function filesIn(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}
