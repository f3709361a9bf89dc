import { canonicalJson, normaliseMessage, sha256 } from "./chain-matching.js";
import { BoundedMap } from "./bounded-map.js";
import type { Pace } from "./pace.js";

/** Messages hashed between two looks at the clock (prefixHashesPaced). */
const PIECE = 16;

/** A session's last call: each message, its JSON text (when made) and length, its prefix hash. */
interface Session {
  readonly messages: readonly unknown[];
  readonly raw: (string | undefined)[];
  readonly lengths: readonly number[];
  readonly prefix: readonly string[];
}

/**
 * The prefix hashes of a recorded call's messages, reusing those of the session's previous
 * call. A client that keeps its history sends the same messages again with every call; their
 * normalised text (sorted keys, no `cache_control`, chain-matching.ts) costs most of the
 * matching time, while the JSON text of a message as it came (`JSON.stringify`, native) costs
 * a third of it. So the last call of each session (named by its seed and its first message) is
 * kept as each message and the prefix hash after it: a message that is the same as at that
 * place last time, after a prefix whose hashes are the same, has the same prefix hash. The same
 * is the same value (a request parsed from where it parts from its session's previous one,
 * recent-requests.ts, holds the previous one's messages before that: nothing to compare) or
 * the same JSON text. A message whose text changed (Claude Code moves `cache_control` to the
 * newest message) is hashed again, and the chain goes on reusing as long as its prefix hash
 * comes out the same.
 * The result is always that of `prefixHashes` (a property test holds them equal); only the
 * time differs. The cache is per process and bounded in bytes (oldest session first out).
 */
export class PrefixHashCache {
  readonly #sessions: BoundedMap<string, Session>;

  constructor(private readonly maxBytes: number = 32 * 1024 * 1024) {
    this.#sessions = new BoundedMap(maxBytes);
  }

  /** What the cache holds now (sessions and counted bytes). */
  get size(): { readonly sessions: number; readonly bytes: number } {
    return { sessions: this.#sessions.size.entries, bytes: this.#sessions.size.bytes };
  }

  prefixHashes(seed: string, messages: readonly unknown[]): string[] {
    const work = this.#hashes(seed, messages);
    for (let step = work.next(); ; step = work.next()) if (step.done === true) return step.value;
  }

  /** The same hashes, letting the event loop run between pieces of a long request (`pace`). */
  async prefixHashesPaced(
    seed: string,
    messages: readonly unknown[],
    pace: Pace,
  ): Promise<string[]> {
    const work = this.#hashes(seed, messages);
    for (let step = work.next(); ; step = work.next()) {
      if (step.done === true) return step.value;
      await pace.step();
    }
  }

  /** Hashes the messages, pausing (a `yield`) every few of them. */
  *#hashes(seed: string, messages: readonly unknown[]): Generator<void, string[]> {
    const caching = messages.length > 0 && this.maxBytes > 0;
    const raw: (string | undefined)[] = new Array<string | undefined>(messages.length);
    const lengths: number[] = [];
    const textOf = (index: number): string =>
      (raw[index] ??= JSON.stringify(messages[index]) ?? "null");
    const key = caching ? `${seed}\n${textOf(0)}` : "";
    const last = caching ? this.#sessions.get(key) : undefined;
    const out: string[] = [];
    let previous = sha256(`verbatim-chain:${seed}`);
    for (let index = 0; index < messages.length; index++) {
      const identical = last !== undefined && last.messages[index] === messages[index];
      if (identical) {
        raw[index] ??= last.raw[index];
        lengths.push(last.lengths[index] as number);
      } else if (caching) {
        lengths.push(textOf(index).length);
      }
      const same =
        last !== undefined &&
        index < last.messages.length &&
        (index === 0 || last.prefix[index - 1] === previous) &&
        (identical || sameText(last, index, textOf(index)));
      previous = same
        ? (last.prefix[index] as string)
        : sha256(`${previous}\n${canonicalJson(normaliseMessage(messages[index]))}`);
      out.push(previous);
      if (index % PIECE === PIECE - 1) yield;
    }
    if (caching) this.#keep(key, { messages, raw, lengths, prefix: out });
    return out;
  }

  #keep(key: string, session: Session): void {
    let bytes = key.length;
    // The messages are kept as values (about their text again) and some as text.
    for (const length of session.lengths) bytes += 2 * length + 64;
    this.#sessions.set(key, session, bytes);
  }
}

/** Whether the session's message `index` had the JSON text `text`. */
function sameText(session: Session, index: number, text: string): boolean {
  const known = (session.raw[index] ??= JSON.stringify(session.messages[index]) ?? "null");
  return known === text;
}
