import { BackgroundAgentJobs } from "../../jobs/job-service.js";
import type { GatewayMessageStore } from "../../conversations/message-store.js";
import type { StoreDatabase } from "../../../store/database.js";
import type { DatabaseLocation } from "../../../store/location.js";
import { canReopen } from "../../../store/read-only-database.js";
import { buildConversationPage, type ConversationPageRequest } from "../conversation-page.js";
import { buildJobPage, type JobPageRequest } from "../job-page.js";
import { PageWorker } from "./host.js";

/** Where the console's message and job pages are built (docs/console.md). */
export interface ConsolePages {
  /** "worker": in the console's worker thread; "event loop": in slices on the main thread. */
  readonly builtIn: "worker" | "event loop";
  /** The worker thread's host when pages are built there (its counters, for tests). */
  readonly worker: PageWorker | undefined;
  conversationPage(request: ConversationPageRequest): Promise<Buffer>;
  jobPage(request: JobPageRequest): Promise<Buffer>;
  /** Starts the worker thread, if any, and has it open the store (when the server listens). */
  warm(): void;
  /** Waits for the pages in flight and ends the worker thread, if any. */
  close(): Promise<void>;
}

export interface ConsoleWorkerOptions {
  /** PostgreSQL: named prepared statements in the worker's pool (default true). */
  readonly preparedStatements?: boolean;
  /** PostgreSQL: connections of the worker's pool (default 2; docs/scale.md, "Connection budget"). */
  readonly poolSize?: number;
  /** PostgreSQL behind a pooler in transaction mode: no startup options (store/database.ts). */
  readonly pooler?: "transaction";
  /** Bytes of parsed messages the worker's own message cache keeps. */
  readonly cacheBytes: number;
  /** Told when the worker thread dies with pages in flight (to log it). */
  readonly onLost?: (error: unknown) => void;
}

/**
 * The console's pages builder: in a worker thread on its own read-only connection to the store
 * (its own message cache, its own garbage collector) when the store can be opened again from
 * its location, so that building a large page never blocks the event loop (issue 20); else
 * (an in-memory SQLite database, or `false`) on the event loop, in slices, as before.
 */
export function openConsolePages(
  database: StoreDatabase,
  store: GatewayMessageStore,
  options: ConsoleWorkerOptions | false,
): ConsolePages {
  // A store object given without a location (JavaScript callers) cannot be opened again either.
  const location = database.location as DatabaseLocation | undefined;
  if (options === false || location === undefined || !canReopen(location)) {
    const jobs = new BackgroundAgentJobs(database);
    return {
      builtIn: "event loop",
      worker: undefined,
      conversationPage: (request) => buildConversationPage(database, store, request),
      jobPage: (request) => buildJobPage(database, jobs, request),
      warm: () => undefined,
      close: async () => undefined,
    };
  }
  const worker = new PageWorker(
    {
      location,
      preparedStatements: options.preparedStatements ?? true,
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
      ...(options.pooler === undefined ? {} : { pooler: options.pooler }),
      cacheBytes: options.cacheBytes,
    },
    options.onLost === undefined ? {} : { onLost: options.onLost },
  );
  return {
    builtIn: "worker",
    worker,
    conversationPage: (request) => worker.build({ kind: "conversation", request }),
    jobPage: (request) => worker.build({ kind: "job", request }),
    warm: () => worker.warm(),
    close: () => worker.close(),
  };
}
