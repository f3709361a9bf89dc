/**
 * The writer thread of an import into a SQLite store (chain-writer.ts): opens its own
 * connection to the file with the import's settings (commits without an fsync each, the
 * import's page cache; the import's thread makes everything durable at the end) and writes
 * each batch it is sent in one transaction, in order, answering each.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../../store/database.js";
import { joinBulkImport } from "../../store/bulk-import.js";
import { writeChainBatch } from "./chain-batch.js";
import {
  sendableError,
  type ChainWriterData,
  type ChainWriterReply,
  type ChainWriterRequest,
} from "./chain-writer.js";

const data = workerData as ChainWriterData;
const port = parentPort;
const opened = openDatabase(data.location, { poolSize: 1 }).then(async (database) => {
  await joinBulkImport(database);
  return database;
});
// Its failure is each batch's answer (a batch waits for it).
opened.catch(() => undefined);
let queue: Promise<unknown> = Promise.resolve();
/** Runs `work` after what came before (a failure before it, opening included, does not stop it). */
const then = (work: () => Promise<void>): void => {
  queue = queue.then(work, work);
};
port?.on("message", (request: ChainWriterRequest) => {
  if (request.type === "close") {
    then(async () => {
      // Nothing to close when opening failed (each batch said so).
      await opened.then((database) => database.close()).catch(() => undefined);
      port.close();
    });
    return;
  }
  then(async () => {
    let reply: ChainWriterReply;
    try {
      await writeChainBatch(await opened, data.subject, request.batch);
      reply = { type: "committed" };
    } catch (error) {
      reply = { type: "failed", error: sendableError(error) };
    }
    port.postMessage(reply);
  });
});
