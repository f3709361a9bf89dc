import { parentPort, workerData } from "node:worker_threads";
import { BackgroundAgentJobs } from "../../jobs/job-service.js";
import { GatewayMessageStore } from "../../conversations/message-store.js";
import type { StoreDatabase } from "../../../store/database.js";
import { openReadOnlyDatabase } from "../../../store/read-only-database.js";
import { buildConversationPage } from "../conversation-page.js";
import { buildJobPage } from "../job-page.js";
import {
  errorToSend,
  type FromWorker,
  type PageJob,
  type PageWorkerSettings,
  type ToWorker,
} from "./protocol.js";

/**
 * The console's worker thread (console/worker/host.ts starts it): it builds console pages on its
 * own connection to the store, opened read-only, with its own message cache, so that reading,
 * parsing, cutting and the garbage they make never block the server's event loop (issue 20).
 */
interface Opened {
  readonly database: StoreDatabase;
  readonly store: GatewayMessageStore;
  readonly jobs: BackgroundAgentJobs;
}

const settings = workerData as PageWorkerSettings;
const port = parentPort;
let opened: Promise<Opened> | undefined;

/** The store, opened at the first page (and again at the next one if opening failed). */
function open(): Promise<Opened> {
  opened ??= openReadOnlyDatabase(settings.location, {
    preparedStatements: settings.preparedStatements,
    poolSize: settings.poolSize ?? 2,
    ...(settings.pooler === undefined ? {} : { pooler: settings.pooler }),
  }).then(
    (database) => ({
      database,
      store: new GatewayMessageStore(database, { cacheBytes: settings.cacheBytes }),
      jobs: new BackgroundAgentJobs(database),
    }),
    (error: unknown) => {
      opened = undefined;
      throw error;
    },
  );
  return opened;
}

async function build(job: PageJob): Promise<Buffer> {
  const { database, store, jobs } = await open();
  return job.kind === "conversation"
    ? buildConversationPage(database, store, job.request)
    : buildJobPage(database, jobs, job.request);
}

/** The bytes in an ArrayBuffer of their own, to be moved to the main thread without a copy. */
function ownBuffer(bytes: Buffer): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    return bytes.buffer as ArrayBuffer;
  }
  // A small buffer lives in Node's shared pool, which must not be moved.
  const own = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(own).set(bytes);
  return own;
}

function answer(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

port?.on("message", (message: ToWorker) => {
  if ("open" in message) {
    // A failure is seen again, and answered, at the first page.
    open().catch(() => undefined);
    return;
  }
  if ("close" in message) {
    // Ends the thread once the store is closed (nothing else keeps it alive).
    void (opened ?? Promise.reject(new Error("never opened")))
      .then((open) => open.database.close())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  build(message.job)
    .then((bytes) => {
      const buffer = ownBuffer(bytes);
      answer({ id: message.id, bytes: buffer }, [buffer]);
    })
    // A page that failed, or could not be sent, is answered with its error.
    .catch((error: unknown) => answer({ id: message.id, error: errorToSend(error) }));
});
