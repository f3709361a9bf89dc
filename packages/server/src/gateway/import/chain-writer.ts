import type { Worker } from "node:worker_threads";
import { VerbatimError, isVerbatimError } from "verbatim-llm/core";
import { spawnSiblingWorker } from "verbatim-llm/internal";
import type { StoreDatabase } from "../../store/database.js";
import type { DatabaseLocation } from "../../store/location.js";
import { writeChainBatch, type ChainBatch } from "./chain-batch.js";

/**
 * Where an import's batches of rows are written (chain-rows.ts plans them): in the
 * import's own thread, or by a thread of their own on SQLite (`writerThread`), so that reading,
 * converting and planning the next batch runs beside SQLite's inserts and commit on a second
 * core. One batch is written at a time, in the order given.
 */
export interface ChainBatchWriter {
  /** True when `write` returns before the batch is committed (its promise says when it is). */
  readonly pipelined: boolean;
  /** Writes a batch in one transaction: resolves once it is committed. */
  write(batch: ChainBatch): Promise<void>;
  /** Ends the writer (after the batches given have been written or have failed). */
  close(): Promise<void>;
}

/** Writes each batch in the calling thread, on the import's own connection. */
export function inThreadWriter(database: StoreDatabase, subject: string): ChainBatchWriter {
  return {
    pipelined: false,
    write: (batch) => writeChainBatch(database, subject, batch),
    close: async () => undefined,
  };
}

/** What the writer thread is given (workerData). */
export interface ChainWriterData {
  readonly location: DatabaseLocation;
  readonly subject: string;
}

/** What the main thread sends the writer thread. */
export type ChainWriterRequest =
  { readonly type: "batch"; readonly batch: ChainBatch } | { readonly type: "close" };

/** What the writer thread answers each batch with. */
export type ChainWriterReply =
  { readonly type: "committed" } | { readonly type: "failed"; readonly error: SentWriterError };

/** A failure of the writer thread: a VerbatimError's fields, or another error's text. */
export interface SentWriterError {
  readonly code?: string;
  readonly message: string;
  readonly where?: string;
  readonly hint?: string;
  readonly stack?: string;
}

/** What the writer thread sends of an error it caught. */
export function sendableError(error: unknown): SentWriterError {
  if (isVerbatimError(error)) {
    return {
      code: error.code,
      message: error.message,
      ...(error.where === undefined ? {} : { where: error.where }),
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    };
  }
  return error instanceof Error
    ? { message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }) }
    : { message: String(error) };
}

/** The error a failure of the writer thread is raised as in the import's thread. */
function receivedError(sent: SentWriterError): Error {
  if (sent.code !== undefined) {
    return new VerbatimError(sent.code as VerbatimError["code"], sent.message, {
      ...(sent.where === undefined ? {} : { where: sent.where }),
      ...(sent.hint === undefined ? {} : { hint: sent.hint }),
    });
  }
  const error = new Error(`the import's writer thread failed: ${sent.message}`);
  if (sent.stack !== undefined) error.stack = `${error.message}\n(writer thread) ${sent.stack}`;
  return error;
}

/**
 * Writes each batch in a worker thread of its own (chain-writer-worker.ts) on a
 * connection of its own to the SQLite file (WAL: the import's connection reads meanwhile and
 * sees each batch once it is committed). A failure to start, or the thread's end, fails every
 * batch still waiting.
 */
export function threadWriter(location: DatabaseLocation, subject: string): ChainBatchWriter {
  const data: ChainWriterData = { location, subject };
  const worker: Worker = spawnSiblingWorker(import.meta.url, "chain-writer-worker", data);
  const waiting: { resolve(): void; reject(error: Error): void }[] = [];
  let ended: Error | undefined;
  const failAll = (error: Error): void => {
    ended ??= error;
    for (const entry of waiting.splice(0)) entry.reject(error);
  };
  worker.on("message", (reply: ChainWriterReply) => {
    const entry = waiting.shift();
    if (reply.type === "committed") entry?.resolve();
    else entry?.reject(receivedError(reply.error));
  });
  worker.on("error", (error) =>
    failAll(new Error(`the import's writer thread failed: ${error.message}`, { cause: error })),
  );
  const exited = new Promise<void>((resolve) =>
    worker.once("exit", () => {
      failAll(new Error("the import's writer thread ended before its batches were written"));
      resolve();
    }),
  );
  return {
    pipelined: true,
    write(batch) {
      if (ended !== undefined) return Promise.reject(ended);
      return new Promise<void>((resolve, reject) => {
        waiting.push({ resolve, reject });
        // The packed contents are moved to the thread, not copied.
        const moved = batch.contents === undefined ? [] : [batch.contents.buffer as ArrayBuffer];
        worker.postMessage({ type: "batch", batch } satisfies ChainWriterRequest, moved);
      });
    },
    async close() {
      if (ended === undefined) worker.postMessage({ type: "close" } satisfies ChainWriterRequest);
      await exited;
    },
  };
}
