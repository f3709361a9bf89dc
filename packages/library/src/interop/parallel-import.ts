import type { Worker } from "node:worker_threads";
import type { FolderSyncBatch } from "../archive/folder-sync-batch.js";
import type { ErrorCode } from "../core/error-codes.js";
import { VerbatimError } from "../core/errors.js";
import {
  ImportControl,
  MAIN_LOCK_OWNER,
  workerLockOwner,
  type ImportWorkerMessage,
  type SentError,
} from "./import-threads.js";
import { spawnImportWorker } from "./import-worker-spawn.js";
import type { ConversationSource } from "./imported.js";
import { SharedNameLocks } from "./name-locks.js";
import { fileImportError, importPackageFile, type FileOutcome } from "./package-file-import.js";

/** How many files a worker imports at once (one file's fsyncs overlap the next one's reading). */
const WORKER_LANES = 2;

export interface ThreadedImport {
  /** Each file's outcome, by its index in the list (undefined: not imported, after a failure). */
  readonly results: readonly (FileOutcome | undefined)[];
  /** The files each thread imported: the main thread's first, then each worker's. */
  readonly filesByThread: readonly number[];
  /** The first failure (a VerbatimError naming its file), once every thread has stopped. */
  readonly failure?: VerbatimError;
}

/**
 * Imports files into packages on the main thread and `workers` worker threads at once: every
 * thread takes whole files from one shared queue (the main thread too, so that a worker still
 * starting delays nothing; a worker called off before it takes a file is ended), imports each
 * into its packages (writes to one package name one after the other across threads,
 * SharedNameLocks) and the main thread records the outcomes by file index (the report's order
 * does not depend on which thread took which file). Each thread holds a few files at a time,
 * never the folder. With `inMainThread: false` the main thread only gathers the outcomes (it
 * imports what is left only if no worker could start). The folders whose fsync makes the
 * writes durable are added to `folderSyncs` for the caller to flush, even those of a file that
 * failed. On a failure no thread takes another file; the files already taken are finished
 * before this returns.
 */
export async function importWithThreads(options: {
  readonly source: ConversationSource;
  readonly files: readonly string[];
  readonly into: string;
  readonly workers: number;
  readonly inMainThread: boolean;
  readonly folderSyncs: FolderSyncBatch;
  readonly onFile: (outcome: FileOutcome) => void;
}): Promise<ThreadedImport> {
  const { files, folderSyncs } = options;
  const control = ImportControl.create(options.workers, WORKER_LANES);
  const lockBuffer = SharedNameLocks.buffer();
  const locks = new SharedNameLocks(lockBuffer, MAIN_LOCK_OWNER);
  const state: ImportState = {
    results: [],
    filesByThread: new Array<number>(options.workers + 1).fill(0),
    failure: undefined,
  };
  const fail = (error: VerbatimError): void => {
    state.failure ??= error;
    control.stop(files.length);
  };
  const record = (index: number, outcome: FileOutcome, thread: number): void => {
    state.results[index] = outcome;
    state.filesByThread[thread] = (state.filesByThread[thread] ?? 0) + 1;
    options.onFile(outcome);
  };
  const workers = Array.from({ length: options.workers }, (_, worker) =>
    startWorker({ ...options, control, lockBuffer, worker, state, fail, record, locks }),
  );
  const lane = async (): Promise<void> => {
    for (;;) {
      const index = control.take();
      const file = files[index];
      if (file === undefined) return;
      try {
        const outcome = await importPackageFile(
          options.source,
          file,
          options.into,
          locks,
          folderSyncs,
        );
        record(index, outcome, 0);
      } catch (error) {
        fail(fileImportError(file, error));
        return;
      }
    }
  };
  const lanes = (): Promise<unknown> =>
    Promise.all(Array.from({ length: MAIN_THREAD_LANES }, lane));
  if (options.inMainThread) await lanes();
  // The queue is empty (or the main thread only gathers): a worker that has not begun is
  // called off and ended when the main thread worked; the others finish the files they took.
  await Promise.all(
    workers.map(async ({ worker, exited }, index) => {
      if (options.inMainThread && control.callOff(index)) await worker.terminate();
      await exited;
    }),
  );
  // Files no thread took (no worker could start): the main thread imports them.
  if (state.failure === undefined) await lanes();
  const { results, filesByThread, failure } = state;
  return { results, filesByThread, ...(failure === undefined ? {} : { failure }) };
}

/** How many files the main thread imports at once (its fsyncs overlap the next file's reading). */
const MAIN_THREAD_LANES = 8;

interface ImportState {
  readonly results: (FileOutcome | undefined)[];
  readonly filesByThread: number[];
  failure: VerbatimError | undefined;
}

/**
 * Starts worker `worker` and follows it: its outcomes are recorded, its failures reported; when
 * it dies, the files it was importing are reported as failed (naming each) and the name locks
 * it held are freed. `exited` resolves once it has stopped (its messages all delivered).
 */
function startWorker(context: {
  readonly source: ConversationSource;
  readonly files: readonly string[];
  readonly into: string;
  readonly workers: number;
  readonly folderSyncs: FolderSyncBatch;
  readonly control: ImportControl;
  readonly lockBuffer: SharedArrayBuffer;
  readonly locks: SharedNameLocks;
  readonly worker: number;
  readonly state: ImportState;
  readonly fail: (error: VerbatimError) => void;
  readonly record: (index: number, outcome: FileOutcome, thread: number) => void;
}): { worker: Worker; exited: Promise<void> } {
  const { control, files, state } = context;
  const worker = spawnImportWorker({
    source: context.source,
    files,
    into: context.into,
    control: control.buffer,
    workers: context.workers,
    inFlight: WORKER_LANES,
    locks: context.lockBuffer,
    worker: context.worker,
  });
  let crash: unknown;
  worker.on("message", (message: ImportWorkerMessage) => {
    for (const folder of message.folders) context.folderSyncs.add(folder);
    if (message.type === "done") context.record(message.index, message.outcome, context.worker + 1);
    else context.fail(receivedError(message.error));
  });
  worker.on("error", (error) => {
    crash = error;
  });
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", (code) => {
      for (const taken of control.lanes(context.worker)) {
        if (state.results[taken] !== undefined) continue;
        const why = crash instanceof Error ? crash.message : `it exited with code ${code}`;
        const stopped = new Error(`the worker thread importing it stopped: ${why}`);
        context.fail(fileImportError(files[taken] ?? "", stopped));
      }
      context.locks.releaseOwner(workerLockOwner(context.worker));
      resolve();
    });
  });
  return { worker, exited };
}

function receivedError(error: SentError): VerbatimError {
  return new VerbatimError(error.code as ErrorCode, error.message, {
    ...(error.where === undefined ? {} : { where: error.where }),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  });
}
