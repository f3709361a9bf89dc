/**
 * A worker thread of a parallel package import (parallel-import.ts): takes whole files from
 * the queue the threads share, imports each into its packages (read, convert, durable write)
 * and sends the outcome, with the folders whose fsync the main thread does at the end. A few
 * files at a time (`inFlight` lanes), so that one file's fsyncs overlap the next one's reading.
 */
import { parentPort, workerData } from "node:worker_threads";
import { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import { isVerbatimError } from "../core/errors.js";
import {
  ImportControl,
  workerLockOwner,
  type ImportWorkerData,
  type ImportWorkerMessage,
} from "./import-threads.js";
import { SharedNameLocks } from "./name-locks.js";
import { fileImportError, importPackageFile } from "./package-file-import.js";

const data = workerData as ImportWorkerData;
const port = parentPort;
const control = new ImportControl(data.control, data.workers, data.inFlight);
const locks = new SharedNameLocks(data.locks, workerLockOwner(data.worker));

async function lane(lane: number): Promise<void> {
  for (;;) {
    const index = control.take();
    const file = data.files[index];
    if (file === undefined) return;
    control.setLane(data.worker, lane, index);
    const folderSyncs = new FolderSyncBatch();
    let message: ImportWorkerMessage;
    try {
      const outcome = await importPackageFile(data.source, file, data.into, locks, folderSyncs);
      message = { type: "done", index, outcome, folders: folderSyncs.waiting };
    } catch (caught) {
      const error = isVerbatimError(caught) ? caught : fileImportError(file, caught);
      message = {
        type: "failed",
        index,
        error: {
          code: error.code,
          message: error.message,
          ...(error.where === undefined ? {} : { where: error.where }),
          ...(error.hint === undefined ? {} : { hint: error.hint }),
        },
        folders: folderSyncs.waiting,
      };
    }
    // After a failure no thread takes another file (the main thread reports the first one).
    if (message.type === "failed") control.stop(data.files.length);
    port?.postMessage(message);
    control.setLane(data.worker, lane, -1);
    if (message.type === "failed") return;
  }
}

if (control.begin(data.worker)) {
  await Promise.all(Array.from({ length: data.inFlight }, (_, index) => lane(index)));
}
