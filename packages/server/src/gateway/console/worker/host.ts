import type { Worker } from "node:worker_threads";
import { VerbatimError } from "verbatim-llm/core";
import {
  errorReceived,
  type FromWorker,
  type PageJob,
  type PageWorkerSettings,
  type ToWorker,
} from "./protocol.js";
import { spawnPageWorker } from "./spawn.js";

interface Pending {
  readonly job: PageJob;
  /** Threads that took this page so far (a page is given to a second one if the first died). */
  tries: number;
  readonly resolve: (bytes: Buffer) => void;
  readonly reject: (error: unknown) => void;
  /** Ends the page with 503 console_page_timeout when the thread takes too long. */
  deadline?: ReturnType<typeof setTimeout>;
}

/** Builds of one page, at most: the first thread's, and one retry if that thread died. */
const MOST_TRIES = 2;
/** How long a closing thread gets to close its store before it is stopped. */
const CLOSE_GRACE_MS = 2000;
/**
 * How long a thread may take over one page before the page fails and the thread is stopped. The
 * largest page (1,000 messages of 8 KiB cut to 1 MiB) takes well under a second, even on a
 * loaded machine (docs/console.md), so a page past this is stuck, not slow.
 */
export const PAGE_TIMEOUT_MS = 30_000;

function pageTimedOut(timeoutMs: number): VerbatimError {
  return new VerbatimError(
    "console_page_timeout",
    `the console's worker thread did not finish this page within ${timeoutMs} ms`,
    {
      hint: "Retry (the stuck thread was stopped and a new one starts); the server log says which page",
      details: { timeoutMs },
    },
  );
}

function workerFailed(cause: unknown): VerbatimError {
  return new VerbatimError(
    "console_worker_failed",
    "the console's worker thread stopped twice while building this page",
    {
      hint: "Retry; the server log has the thread's error",
      cause,
    },
  );
}

/**
 * The console's worker thread, seen from the main thread: it starts at the first page, builds
 * each page given to it (several at once), is started again at the next page when it dies (the
 * pages it held are given to the new thread once, then fail with 503 console_worker_failed), and
 * ends on close() once the pages in flight are answered. The thread never keeps the process
 * alive on its own.
 */
export class PageWorker {
  readonly #settings: PageWorkerSettings;
  readonly #spawn: (settings: PageWorkerSettings) => Worker;
  readonly #onLost: (error: unknown) => void;
  readonly #pageTimeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  /** The pages in flight, for close() to wait for. */
  readonly #answers = new Set<Promise<Buffer>>();
  #worker: Worker | undefined;
  #nextId = 1;
  #closing: Promise<void> | undefined;
  /**
   * Threads started, pages a thread answered (built or failed), pages given to a second thread,
   * pages that ran past the page timeout.
   */
  readonly stats = { started: 0, answered: 0, retried: 0, timedOut: 0 };

  constructor(
    settings: PageWorkerSettings,
    options: {
      readonly onLost?: (error: unknown) => void;
      readonly spawn?: (settings: PageWorkerSettings) => Worker;
      /** How long one page may take in the thread (PAGE_TIMEOUT_MS unless given). */
      readonly pageTimeoutMs?: number;
    } = {},
  ) {
    this.#settings = settings;
    this.#spawn = options.spawn ?? spawnPageWorker;
    this.#onLost = options.onLost ?? (() => undefined);
    this.#pageTimeoutMs = options.pageTimeoutMs ?? PAGE_TIMEOUT_MS;
  }

  /** Pages given to a thread and not answered yet. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Whether a thread runs now. */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /**
   * Starts the thread and has it open the store now, so that the first page does not wait for
   * them (a thread that loads the store's modules answered its first page 0.8–0.9 s after the
   * start compiled, 1.5–3.5 s from the TypeScript sources, on 2 busy cores).
   */
  warm(): void {
    if (this.#closing === undefined) this.#thread().postMessage({ open: true } satisfies ToWorker);
  }

  /** The page's UTF-8 JSON reply; the errors thrown while building it, as thrown there. */
  build(job: PageJob): Promise<Buffer> {
    if (this.#closing !== undefined) {
      return Promise.reject(
        new VerbatimError("server_closing", "the server is shutting down", {
          hint: "Retry on another server or once this one is back",
        }),
      );
    }
    const answer = new Promise<Buffer>((resolve, reject) => {
      const id = this.#nextId++;
      const pending: Pending = { job, tries: 0, resolve, reject };
      this.#pending.set(id, pending);
      this.#send(id, pending);
    });
    this.#answers.add(answer);
    const forget = () => this.#answers.delete(answer);
    answer.then(forget, forget);
    return answer;
  }

  #send(id: number, pending: Pending): void {
    pending.tries++;
    const message: ToWorker = { id, job: pending.job };
    const worker = this.#thread();
    clearTimeout(pending.deadline);
    pending.deadline = setTimeout(() => this.#timedOut(id, worker), this.#pageTimeoutMs);
    pending.deadline.unref();
    worker.postMessage(message);
  }

  /**
   * A page past its time: it fails (it is not given to another thread, where it would most
   * likely get stuck again), and the thread that holds it is stopped, so that a stuck thread
   * neither holds the other pages nor keeps close() waiting; those go to a new thread once.
   */
  #timedOut(id: number, worker: Worker): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    this.stats.timedOut++;
    this.#onLost(
      new Error(`a page took over ${this.#pageTimeoutMs} ms: ${JSON.stringify(pending.job)}`),
    );
    pending.reject(pageTimedOut(this.#pageTimeoutMs));
    void worker.terminate();
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = this.#spawn(this.#settings);
    this.#worker = worker;
    this.stats.started++;
    worker.unref();
    worker.on("message", (message: FromWorker) => this.#answer(message));
    worker.on("error", (error) => this.#lost(worker, error));
    worker.on("exit", (code) => this.#lost(worker, new Error(`the thread exited (${code})`)));
    return worker;
  }

  #answer(message: FromWorker): void {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.deadline);
    this.stats.answered++;
    if ("bytes" in message) {
      pending.resolve(Buffer.from(message.bytes));
    } else {
      pending.reject(errorReceived(message.error));
    }
  }

  /** The thread died (or ended): its pages go to a new thread once, or fail. */
  #lost(worker: Worker, error: unknown): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    if (this.#pending.size === 0) return;
    this.#onLost(error);
    for (const [id, pending] of this.#pending) {
      if (pending.tries < MOST_TRIES && this.#closing === undefined) {
        this.stats.retried++;
        this.#send(id, pending);
      } else {
        this.#pending.delete(id);
        clearTimeout(pending.deadline);
        pending.reject(workerFailed(error));
      }
    }
  }

  /** Ends the thread as a crash would (tests): its pages go to a new thread. */
  async stopThread(): Promise<void> {
    await this.#worker?.terminate();
  }

  /** Waits for the pages in flight, then closes the thread's store and ends the thread. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled(this.#answers);
      const worker = this.#worker;
      if (worker === undefined) return;
      this.#worker = undefined;
      const ended = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      const stop = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
      worker.postMessage({ close: true } satisfies ToWorker);
      await ended;
      clearTimeout(stop);
    })();
    return this.#closing;
  }
}
