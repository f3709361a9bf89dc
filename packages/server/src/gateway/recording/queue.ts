/**
 * Work run one piece at a time per key (a subject), in the order it was added: the placing of
 * recorded calls in their chains (gateway/recording/calls.ts). A piece that fails does not stop
 * the ones after it; its caller gets the error.
 */
export class SubjectQueues {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `work` after everything added before under `key`. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    const result = previous === undefined ? work() : previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Whether work is queued or running under `key`. */
  has(key: string): boolean {
    return this.#tails.has(key);
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.#tails.size;
  }

  /** Resolves once no work is queued or running (work added meanwhile included). */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all(this.#tails.values());
  }
}
