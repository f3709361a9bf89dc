import type { ConversationSource } from "./imported.js";
import type { FileOutcome } from "./package-file-import.js";

/**
 * What the threads of one parallel import share (a SharedArrayBuffer of Int32 slots): the next
 * file to take (every thread takes whole files from this one queue with Atomics.add), each
 * worker's state (a worker still starting can be called off before it takes a file), and the
 * files each worker is importing (so that a worker that dies is reported with its files).
 */
export class ImportControl {
  readonly slots: Int32Array;

  constructor(
    readonly buffer: SharedArrayBuffer,
    readonly workers: number,
    readonly inFlight: number,
  ) {
    this.slots = new Int32Array(buffer);
  }

  static create(workers: number, inFlight: number): ImportControl {
    const size = 1 + workers + workers * inFlight;
    return new ImportControl(
      new SharedArrayBuffer(size * Int32Array.BYTES_PER_ELEMENT),
      workers,
      inFlight,
    );
  }

  /** The next file's index (≥ `files` when none is left). */
  take(): number {
    return Atomics.add(this.slots, 0, 1);
  }

  /** No thread takes another file (after a failure). */
  stop(files: number): void {
    Atomics.store(this.slots, 0, files);
  }

  /** A worker starts working (true) unless it was called off first (false). */
  begin(worker: number): boolean {
    return Atomics.compareExchange(this.slots, 1 + worker, STARTING, WORKING) === STARTING;
  }

  /** Calls a worker off unless it began (true when called off: it will take nothing). */
  callOff(worker: number): boolean {
    return Atomics.compareExchange(this.slots, 1 + worker, STARTING, CALLED_OFF) === STARTING;
  }

  /** Records (index ≥ 0) or clears (-1) the file a worker imports in one of its lanes. */
  setLane(worker: number, lane: number, index: number): void {
    Atomics.store(this.slots, this.laneSlot(worker, lane), index + 1);
  }

  /** The files a worker was importing. */
  lanes(worker: number): number[] {
    const files: number[] = [];
    for (let lane = 0; lane < this.inFlight; lane++) {
      const value = Atomics.load(this.slots, this.laneSlot(worker, lane));
      if (value > 0) files.push(value - 1);
    }
    return files;
  }

  private laneSlot(worker: number, lane: number): number {
    return 1 + this.workers + worker * this.inFlight + lane;
  }
}

const STARTING = 0;
const WORKING = 1;
const CALLED_OFF = 2;

/** What a worker is given (workerData). */
export interface ImportWorkerData {
  readonly source: ConversationSource;
  readonly files: readonly string[];
  readonly into: string;
  readonly control: SharedArrayBuffer;
  readonly workers: number;
  readonly inFlight: number;
  readonly locks: SharedArrayBuffer;
  /** This worker's index (0-based); its lock owner id is index + 2 (the main thread's is 1). */
  readonly worker: number;
}

/** A failure sent from a worker: the fields of the VerbatimError naming the file. */
export interface SentError {
  readonly code: string;
  readonly message: string;
  readonly where?: string;
  readonly hint?: string;
}

/** What a worker sends for each file it took. */
export type ImportWorkerMessage =
  | {
      readonly type: "done";
      readonly index: number;
      readonly outcome: FileOutcome;
      readonly folders: readonly string[];
    }
  | {
      readonly type: "failed";
      readonly index: number;
      readonly error: SentError;
      readonly folders: readonly string[];
    };

export const MAIN_LOCK_OWNER = 1;

export function workerLockOwner(worker: number): number {
  return worker + 2;
}
