/**
 * Lets the event loop run between pieces of a long piece of work (the placing of a recorded
 * call, gateway/recording/placing.ts): `step()` yields a turn (setImmediate: the timers and
 * sockets that are due run first) once `sliceMs` have passed since the last yield, so no other
 * request waits for the whole work, only for a slice of it.
 */
export class Pace {
  #since = performance.now();

  constructor(private readonly sliceMs: number = 4) {}

  /** Yields when this slice's time is used up. */
  async step(): Promise<void> {
    if (performance.now() - this.#since >= this.sliceMs) await this.yield();
  }

  /** Yields a turn of the event loop now. */
  async yield(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}
