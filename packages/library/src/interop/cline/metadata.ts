import { arrayOf, compactJson, field, numberOf, recordOf, stringOf } from "../json-access.js";
import type { LeftOutLedger } from "../report.js";
import type { TaskJson } from "./task-files.js";

/** A model the task used from a time on (Cline's `task_metadata.json` `model_usage`). */
export interface ModelUse {
  readonly ts: number | undefined;
  readonly model: string;
  readonly provider: string | undefined;
}

export interface TaskMetadata {
  readonly models: readonly ModelUse[];
  /** The task that started this one (Roo Code's subtasks: `parentTaskId`). */
  readonly parentTaskId: string | undefined;
  readonly rootTaskId: string | undefined;
  /** Fields kept as a notice (the environment the task ran in, its mode). */
  readonly notices: readonly { readonly key: string; readonly detail: string }[];
}

/** Fields read into the conversation; every other one is reported with its reason. */
const KEPT_AS_NOTICE = new Set(["environment_history", "mode", "workspace"]);

const FIELD_REASONS: Readonly<Record<string, string>> = {
  files_in_context:
    "Cline's record of the files it read and edited, for its own context tracking: not conversation",
};

const BOOKKEEPING =
  "the extension's bookkeeping of the task (totals, sizes, status, title): the conversation and each request's usage are imported from the other files";

/**
 * The task's metadata (`task_metadata.json`, and Roo Code's `history_item.json`): the models it
 * used, its parent task, and its environment; every other field reported.
 */
export function readTaskMetadata(
  files: readonly (TaskJson | undefined)[],
  leftOut: LeftOutLedger,
): TaskMetadata {
  const models: ModelUse[] = [];
  const notices: { key: string; detail: string }[] = [];
  let parentTaskId: string | undefined;
  let rootTaskId: string | undefined;
  for (const file of files) {
    if (file === undefined) continue;
    if (file.reason !== undefined) {
      leftOut.add(file.file, "task metadata file", file.reason);
      continue;
    }
    const record = recordOf(file.value);
    if (record === undefined) {
      leftOut.add(file.file, "task metadata file", "not a JSON object: kept in the source only");
      continue;
    }
    for (const key of Object.keys(record)) {
      const value = field(record, key);
      if (key === "model_usage") {
        for (const entry of arrayOf(value) ?? []) {
          const use = recordOf(entry);
          const model = stringOf(field(use, "model_id"));
          if (model === undefined) continue;
          models.push({
            ts: numberOf(field(use, "ts")),
            model,
            provider: stringOf(field(use, "model_provider_id")),
          });
        }
      } else if (key === "parentTaskId" && stringOf(value) !== "") {
        parentTaskId = stringOf(value);
      } else if (key === "rootTaskId" && stringOf(value) !== "") {
        rootTaskId = stringOf(value);
      } else if (KEPT_AS_NOTICE.has(key)) {
        notices.push({ key, detail: compactJson(value) });
      } else {
        leftOut.add(file.file, `task metadata field ${key}`, FIELD_REASONS[key] ?? BOOKKEEPING);
      }
    }
  }
  return { models, parentTaskId, rootTaskId, notices };
}

/** The model in use at `ts` (the newest entry at or before it; the last one without a time). */
export function modelAt(models: readonly ModelUse[], ts: number | undefined): ModelUse | undefined {
  let found: ModelUse | undefined;
  for (const use of models) {
    if (ts !== undefined && use.ts !== undefined && use.ts > ts) break;
    found = use;
  }
  return found;
}
