import { RecentPerSubject } from "../recent-per-subject.js";
import type { BaseBody } from "./encoder.js";

/**
 * The last few request bodies each subject stored through this process, as bases for its next
 * ones (docs/server/recorded-calls.md, "How recorded bytes are stored"): a session's next
 * request is its previous one plus a turn, so its diff is found by comparing bytes in memory,
 * with no lookup. Bounded in bodies per subject and in bytes overall (least recently used out
 * first); a process that does not hold a session's previous body finds its bytes through the
 * chunk index instead, and starts a new chain of diffs.
 */
export class RecentBodies extends RecentPerSubject<BaseBody> {
  constructor(maxBytes: number = 64 * 1024 * 1024, perSubject: number = 4) {
    super(maxBytes, perSubject);
  }
}
