import type { Worker } from "node:worker_threads";
import { spawnSiblingWorker } from "./sibling-worker.js";
import type { ImportWorkerData } from "./import-threads.js";

/** Starts an import worker on import-worker.js (or .ts, from the sources) beside this file. */
export function spawnImportWorker(data: ImportWorkerData): Worker {
  return spawnSiblingWorker(import.meta.url, "import-worker", data);
}
