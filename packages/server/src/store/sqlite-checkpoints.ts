import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

/**
 * WAL checkpoints on a thread of their own (docs/server/recorded-calls.md, "Recorded calls"). SQLite's automatic
 * checkpoint runs inside the commit that crosses 1,000 WAL pages, copying them into the
 * database file on the committing thread: for the server, the thread that answers every
 * request. Here the server's connection turns the automatic checkpoint off and a worker thread,
 * with a connection of its own to the same file, runs a PASSIVE checkpoint (it never waits for
 * or blocks a writer or reader) every `intervalMs`. The writer starts the WAL again from its
 * beginning only when a checkpoint has copied every frame before its next commit, which a
 * writer that keeps committing while the thread copies (a busy disk) may never give it: when
 * the thread finds the WAL holding more than BEHIND_PAGES frames, the connection's automatic
 * checkpoint is turned back on until the WAL is small again, so the writer copies the frames
 * itself at a commit and starts the WAL again at the next. If the
 * worker fails or exits, the automatic checkpoint is turned back on for good: the WAL never
 * grows without bound.
 */
export interface CheckpointThread {
  /** Stops the worker (its connection closed) and turns the automatic checkpoint back on. */
  stop(): Promise<void>;
}

/** SQLite's default automatic checkpoint, in WAL pages. */
const AUTOMATIC_PAGES = 1000;
/** WAL frames past which the writer's own checkpoint is turned back on. */
const BEHIND_PAGES = 2 * AUTOMATIC_PAGES;

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = FULL");
let behind = false;
const timer = setInterval(() => {
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    // Frames since the WAL last started again: copying them all is not enough, the writer
    // starts the WAL again only if a checkpoint finished between two of its commits.
    const now = result !== undefined && result.log > workerData.behindPages;
    if (now !== behind) {
      behind = now;
      parentPort.postMessage({ behind });
    }
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
}, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage({ ready: true });
`;

export async function startCheckpointThread(
  connection: BetterSqlite3.Database,
  path: string,
  options: { readonly intervalMs?: number; readonly onError?: (message: string) => void } = {},
): Promise<CheckpointThread> {
  const module = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      module,
      path,
      intervalMs: options.intervalMs ?? 100,
      behindPages: BEHIND_PAGES,
    },
  });
  const automatic = (on: boolean) => {
    if (connection.open) connection.pragma(`wal_autocheckpoint = ${on ? AUTOMATIC_PAGES : 0}`);
  };
  let stopping = false;
  await new Promise<void>((resolve, reject) => {
    worker.once("error", reject);
    worker.on("message", (message: { ready?: boolean; error?: string; behind?: boolean }) => {
      if (message.ready === true) resolve();
      else if (message.error !== undefined) options.onError?.(message.error);
      // Behind: the writer checkpoints at its commits until the thread has caught up.
      else if (message.behind !== undefined && !stopping) automatic(message.behind);
    });
  });
  automatic(false);
  worker.on("error", (error) => options.onError?.(String(error)));
  worker.once("exit", () => {
    if (!stopping) options.onError?.("the checkpoint thread exited");
    automatic(true);
  });
  // A server that is closing without stop() (a crash) must not be kept alive by the thread.
  worker.unref();
  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      // Unreferenced, the thread would not keep the process alive until it has exited.
      worker.ref();
      worker.postMessage("stop");
      await exited;
    },
  };
}
