import type { StoreDatabase } from "../../store/database.js";
import { pruneStore, type RetentionReport } from "./retention.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RollingRetentionOptions {
  /** What ended more than this many days ago goes. */
  readonly days: number;
  /** How often it runs (default hourly). */
  readonly everyMs?: number;
  /** The clock (tests move it). */
  readonly now?: () => number;
  /** Told after each run that removed something, and of each failure. */
  readonly onReport?: (report: RetentionReport) => void;
  readonly onError?: (error: unknown) => void;
}

/**
 * The server's rolling retention (VERBATIM_RETENTION_DAYS; docs/server/retention.md): `verbatim db
 * prune --before <now − days>` at start and then every hour, in the background, one run at a
 * time. Several servers on one database may all run it: each step is a transaction that finds
 * what is left.
 */
export class RollingRetention {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly database: StoreDatabase,
    private readonly options: RollingRetentionOptions,
  ) {}

  /** Runs now, then every `everyMs`. */
  start(): void {
    const tick = (): void => {
      if (this.#stopped) return;
      this.#running = this.runOnce()
        .then((report) => {
          const removed = report.conversations + report.recorded_calls + report.jobs;
          if (removed > 0) this.options.onReport?.(report);
        })
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => {
          if (!this.#stopped)
            this.#timer = setTimeout(tick, this.options.everyMs ?? 60 * 60 * 1000).unref();
        });
    };
    tick();
  }

  runOnce(): Promise<RetentionReport> {
    const now = (this.options.now ?? Date.now)();
    return pruneStore(this.database, {
      before: new Date(now - this.options.days * DAY_MS).toISOString(),
    });
  }

  /** Stops the timer and waits for a run under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#running;
  }
}
