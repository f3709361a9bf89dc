/**
 * When the placing of recorded calls may run (gateway/recording/calls.ts): once no recorded
 * call has been reading its request or writing its answer for `quietMs`, or, under traffic
 * that never pauses, `maxDelayMs` after the call was kept. Placing takes the database (on
 * SQLite its one connection) and the event loop for longer than a call's own work; run while
 * another call is answered, it delays that answer.
 */
export class QuietGate {
  #busy = 0;
  #lastBusy = 0;

  constructor(
    private readonly quietMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /** Marks a call busy until the returned function is called (more calls: no effect). */
  busy(): () => void {
    this.#busy++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#busy--;
      this.#lastBusy = performance.now();
    };
  }

  /** Resolves once quiet, or `maxDelayMs` after `since` (a performance.now() time). */
  async quiet(since: number): Promise<void> {
    const deadline = since + this.maxDelayMs;
    for (;;) {
      const now = performance.now();
      const quietFor = this.#busy === 0 ? now - this.#lastBusy : 0;
      if (quietFor >= this.quietMs || now >= deadline) return;
      const wait = Math.min(this.quietMs - quietFor, deadline - now);
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, wait)));
    }
  }
}
