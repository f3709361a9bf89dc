import { availableParallelism } from "node:os";
import type { ConversationSource } from "./imported.js";
import type { TrajectorySource } from "./trajectories/rows.js";
import { acceptsOpenCodeFile } from "./opencode/file-kinds.js";
import { isGeminiCliFile } from "./gemini-cli/file-names.js";
import { isClineTaskFile } from "./cline/file-names.js";

// What an import looks for before it reads anything: the file names each source's importer
// reads, and how many threads it uses. Kept apart from the importers, so that a caller that only
// lists files (the server's `verbatim import --into <database>`) does not load them.

const CONVERSATION_FILE_NAMES: Readonly<
  Record<ConversationSource, (name: string, path: string) => boolean>
> = {
  "claude-code": (name) => name.endsWith(".jsonl"),
  codex: (name) => name.endsWith(".jsonl"),
  opencode: acceptsOpenCodeFile,
  "gemini-cli": isGeminiCliFile,
  cline: isClineTaskFile,
};

const TRAJECTORY_FILE_NAMES: Readonly<Record<TrajectorySource, (name: string) => boolean>> = {
  "swe-agent": (name) => name.endsWith(".traj"),
  openhands: (name) => name.endsWith(".json") || name === "output.jsonl",
  inspect: (name) => name.endsWith(".json"),
  codex: (name) => name.endsWith(".jsonl"),
};

/**
 * True when a file found in a folder is one the source's importer reads: by its name, and for
 * OpenCode's storage folder by where it is (`path`, the file's full path; the name by default).
 */
export function acceptsFile(source: ConversationSource, name: string, path = name): boolean {
  return CONVERSATION_FILE_NAMES[source](name, path);
}

/** True when a file's name is one the trajectory importer of a source reads. */
export function acceptsTrajectoryFile(source: TrajectorySource, name: string): boolean {
  return TRAJECTORY_FILE_NAMES[source](name);
}

const MAX_DEFAULT_JOBS = 4;

/** The threads an import uses by default: the machine's available parallelism, at most 4. */
export function defaultImportJobs(): number {
  return Math.min(availableParallelism(), MAX_DEFAULT_JOBS);
}
