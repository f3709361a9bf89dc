import type { BaseBody } from "./encoder.js";

/**
 * The last few request bodies each subject stored through this process, as bases for its next
 * ones (docs/server/recorded-calls.md, "How recorded bytes are stored"): a session's next
 * request is its previous one plus a turn, so its diff is found by comparing bytes in memory,
 * with no lookup. Bounded in bodies per subject and in bytes overall (least recently used out
 * first); a process that does not hold a session's previous body finds its bytes through the
 * chunk index instead, and starts a new chain of diffs.
 */
export class RecentBodies {
  readonly #bySubject = new Map<string, BaseBody[]>();
  #bytes = 0;

  constructor(
    private readonly maxBytes: number = 64 * 1024 * 1024,
    private readonly perSubject: number = 4,
  ) {}

  of(subjectUid: string): readonly BaseBody[] {
    const bodies = this.#bySubject.get(subjectUid);
    if (bodies === undefined) return [];
    // Touched: last out.
    this.#bySubject.delete(subjectUid);
    this.#bySubject.set(subjectUid, bodies);
    return bodies;
  }

  /** Adds a subject's newest body; it replaces the body it was a diff of. */
  add(subjectUid: string, body: BaseBody, replaces: string | undefined): void {
    if (body.bytes.length > this.maxBytes / 4) return;
    const bodies = [...this.of(subjectUid)];
    const at = bodies.findIndex((entry) => entry.callId === replaces);
    if (at >= 0) this.#bytes -= (bodies.splice(at, 1)[0] as BaseBody).bytes.length;
    bodies.unshift(body);
    this.#bytes += body.bytes.length;
    while (bodies.length > this.perSubject) this.#bytes -= (bodies.pop() as BaseBody).bytes.length;
    this.#bySubject.set(subjectUid, bodies);
    for (const [subject, entries] of this.#bySubject) {
      if (this.#bytes <= this.maxBytes) break;
      if (subject === subjectUid) continue;
      for (const entry of entries) this.#bytes -= entry.bytes.length;
      this.#bySubject.delete(subject);
    }
  }

  /** Forgets a subject's bodies (its stored calls were deleted, or a base was found gone). */
  forget(subjectUid: string): void {
    for (const entry of this.#bySubject.get(subjectUid) ?? []) this.#bytes -= entry.bytes.length;
    this.#bySubject.delete(subjectUid);
  }
}
