/**
 * A map bounded in bytes (each entry counts the bytes it is given), least recently used out
 * first: the recording's per-process caches (prefix-cache.ts, bodies/read-cache.ts).
 */
export class BoundedMap<Key, Value> {
  readonly #entries = new Map<Key, { readonly value: Value; readonly bytes: number }>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** What it holds now (entries and counted bytes). */
  get size(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.#entries.size, bytes: this.#bytes };
  }

  /** The entry (touched: last out), if kept. */
  get(key: Key): Value | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps the entry (replacing the key's), unless it alone is over the bound; evicts the oldest. */
  set(key: Key, value: Value, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  /** The values, least recently used first (not touched). */
  *values(): IterableIterator<Value> {
    for (const entry of this.#entries.values()) yield entry.value;
  }

  delete(key: Key): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
