import { BoundedMap } from "./bounded-map.js";

/**
 * The last few request bodies of each subject, newest first, with what a process keeps of each
 * (bodies/recent-bodies.ts: bases for the next diff; recent-requests.ts: parsed values for the
 * next parse). Bounded in entries per subject and in bytes overall (least recently used subject
 * out first); a body over a quarter of the bytes is not kept.
 */
export class RecentPerSubject<Entry extends { readonly bytes: Buffer }> {
  readonly #bySubject: BoundedMap<string, readonly Entry[]>;

  constructor(
    private readonly maxBytes: number,
    private readonly perSubject: number = 4,
  ) {
    this.#bySubject = new BoundedMap(maxBytes);
  }

  /** What it holds now (bodies and their bytes). */
  get size(): { readonly bodies: number; readonly bytes: number } {
    let bodies = 0;
    for (const entries of this.#bySubject.values()) bodies += entries.length;
    return { bodies, bytes: this.#bySubject.size.bytes };
  }

  /** A subject's entries, newest first (touched: last out). */
  of(subjectUid: string): readonly Entry[] {
    return this.#bySubject.get(subjectUid) ?? [];
  }

  /** Adds a subject's newest entry; it replaces the entry `replaces` picks (the one it grew from). */
  add(subjectUid: string, entry: Entry, replaces?: (kept: Entry) => boolean): void {
    if (entry.bytes.length > this.maxBytes / 4) return;
    const before = this.of(subjectUid);
    const at = replaces === undefined ? -1 : before.findIndex(replaces);
    const entries = [entry, ...before.filter((_, index) => index !== at)].slice(0, this.perSubject);
    this.#bySubject.set(
      subjectUid,
      entries,
      entries.reduce((sum, kept) => sum + kept.bytes.length, 0),
    );
  }

  /** Forgets a subject's entries. */
  forget(subjectUid: string): void {
    this.#bySubject.delete(subjectUid);
  }
}
