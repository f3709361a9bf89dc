import type { StoreDatabase } from "../../store/database.js";
import { listLeftoverCalls } from "../../store/repositories/recorded-placing.js";

/** Calls read per sweep: a bounded statement, whatever the backlog. */
const CALLS_PER_SWEEP = 100;
/** Failed calls left out of a sweep's statement by id, at most. */
const SKIPPED_AT_MOST = 1000;

export interface LeftoverSweepOptions {
  /**
   * How long after its keep a call still unplaced is taken as left by a server that died
   * (default 30 s, the response lease): every third of it, the oldest such calls are placed.
   */
  readonly afterMs?: number;
  /** The clock (tests). */
  readonly now?: () => Date;
}

/** What the sweep asks of the recorder (calls.ts). */
export interface LeftoverPlacer {
  /** Queues the placing of the subject's unplaced calls, unless it is queued already. */
  placeSubject(subjectUid: string): void;
  /** Calls whose placing failed in this process: not tried again until the next start. */
  failedIds(): readonly string[];
}

/**
 * Finds the recorded calls nobody is placing (docs/server/recorded-calls.md, "What is written
 * when"): those a crash left, or a server that died between keeping a call and placing it. Each
 * server sweeps at start (every unplaced call) and then every third of `afterMs` (the calls kept
 * more than `afterMs` ago), a bounded batch of the oldest through an index of the unplaced calls
 * only (docs/scale.md). Two servers may queue the same subject: its placing transactions take
 * the subject's lock and check the call is still unplaced, so each call is placed once.
 */
export class LeftoverSweep {
  readonly afterMs: number;
  readonly #now: () => Date;
  #timer: ReturnType<typeof setInterval> | undefined;
  #round: Promise<void> | undefined;

  constructor(
    private readonly database: StoreDatabase,
    private readonly placer: LeftoverPlacer,
    options: LeftoverSweepOptions = {},
  ) {
    this.afterMs = options.afterMs ?? 30_000;
    this.#now = options.now ?? (() => new Date());
  }

  /** Queues the subjects of the oldest unplaced calls kept before `keptBefore`; their count. */
  async sweep(keptBefore: Date): Promise<number> {
    const failed = this.placer.failedIds().slice(0, SKIPPED_AT_MOST);
    const rows = await listLeftoverCalls(
      this.database.db,
      keptBefore.toISOString(),
      CALLS_PER_SWEEP,
      failed,
    );
    const subjects = new Set(rows.map((row) => row.subject_uid));
    for (const subjectUid of subjects) this.placer.placeSubject(subjectUid);
    return subjects.size;
  }

  /** Sweeps every unplaced call now, then the stale ones every third of `afterMs` until `stop`. */
  async start(onError: (error: unknown) => void): Promise<void> {
    if (this.#timer === undefined) {
      this.#timer = setInterval(
        () => {
          if (this.#round !== undefined) return;
          this.#round = this.sweep(new Date(this.#now().getTime() - this.afterMs))
            .then(() => undefined, onError)
            .finally(() => (this.#round = undefined));
        },
        Math.max(1, Math.floor(this.afterMs / 3)),
      );
      this.#timer.unref();
    }
    await this.sweep(this.#now());
  }

  /** Stops sweeping and waits for a sweep under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }
}
