/**
 * Counts route handlers still running, so shutdown can wait for them: a client that hangs up
 * does not end its handler at once (a response aborts its upstream call, then is stored as
 * incomplete; docs/server/responses.md, "Response lifecycle"), and the database must stay open until
 * every handler has finished.
 */
export class InFlightWork {
  #running = 0;
  #waiters: (() => void)[] = [];

  get running(): number {
    return this.#running;
  }

  start(): void {
    this.#running++;
  }

  end(): void {
    this.#running--;
    if (this.#running === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once no handler runs. */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
