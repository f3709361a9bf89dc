import { canonicalJson, normaliseMessage, sha256 } from "./chain-matching.js";
import type { Pace } from "./pace.js";

/** Messages hashed between two looks at the clock (prefixHashesPaced). */
const PIECE = 16;

/**
 * The prefix hashes of a recorded call's messages, reusing those of the session's previous
 * call. A client that keeps its history sends the same messages again with every call; their
 * normalised text (sorted keys, no `cache_control`, chain-matching.ts) costs most of the
 * matching time, while the JSON text of a message as it came (`JSON.stringify`, native) costs
 * a third of it. So the last call of each session (named by its seed and its first message) is
 * kept as the JSON text and prefix hash of each message: a message whose text is the same as at
 * that place last time, after a prefix whose hashes are the same, has the same prefix hash.
 * A message whose text changed (Claude Code moves `cache_control` to the newest message) is
 * hashed again, and the chain goes on reusing as long as its prefix hash comes out the same.
 * The result is always that of `prefixHashes` (a property test holds them equal); only the
 * time differs. The cache is per process and bounded in bytes (oldest session first out).
 */
export class PrefixHashCache {
  readonly #sessions = new Map<string, { raw: string[]; prefix: string[]; bytes: number }>();
  #bytes = 0;

  constructor(private readonly maxBytes: number = 32 * 1024 * 1024) {}

  /** What the cache holds now (sessions and counted bytes). */
  get size(): { readonly sessions: number; readonly bytes: number } {
    return { sessions: this.#sessions.size, bytes: this.#bytes };
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
    const raw: string[] = [];
    for (let index = 0; caching && index < messages.length; index++) {
      raw.push(JSON.stringify(messages[index]) ?? "null");
      if (index % PIECE === PIECE - 1) yield;
    }
    const key = `${seed}\n${raw[0]}`;
    const last = caching ? this.#sessions.get(key) : undefined;
    const out: string[] = [];
    let previous = sha256(`verbatim-chain:${seed}`);
    for (let index = 0; index < messages.length; index++) {
      const same =
        last !== undefined &&
        last.raw[index] === raw[index] &&
        (index === 0 || last.prefix[index - 1] === previous);
      previous = same
        ? (last.prefix[index] as string)
        : sha256(`${previous}\n${canonicalJson(normaliseMessage(messages[index]))}`);
      out.push(previous);
      if (index % PIECE === PIECE - 1) yield;
    }
    if (caching) this.#keep(key, raw, out);
    return out;
  }

  #keep(key: string, raw: string[], prefix: string[]): void {
    const old = this.#sessions.get(key);
    if (old !== undefined) {
      this.#sessions.delete(key);
      this.#bytes -= old.bytes;
    }
    let bytes = key.length;
    for (const text of raw) bytes += text.length + 64;
    if (bytes > this.maxBytes) return;
    this.#sessions.set(key, { raw, prefix, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#sessions) {
      if (this.#bytes <= this.maxBytes) break;
      this.#sessions.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }
}
