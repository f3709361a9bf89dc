import type { GatewayMessage } from "./message-types.js";

/** Bytes a message is counted as, beside its JSON text: ids, times and object overhead. */
const ENTRY_OVERHEAD = 256;

/**
 * Parsed messages kept in memory by id, least recently used first out, within a byte budget
 * (counted as the length of their stored JSON plus a fixed overhead). Only messages with a final
 * status are kept: a final message never changes (docs/store.md), so an entry is never stale,
 * also when several processes share one database. Entries are frozen, since every reader gets
 * the same objects. Beside each message, the two facts of its row that appending to it and
 * reading its context need and the message does not hold (its branch, the depth its context
 * starts at), which never change either.
 */
export class MessageCache {
  readonly maxBytes: number;
  #bytes = 0;
  readonly #entries = new Map<string, CacheEntry>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(id: string): GatewayMessage | undefined {
    return this.entry(id)?.message;
  }

  /** The message and its row facts, most recently used from now on. */
  entry(id: string): Readonly<CacheEntry> | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    return entry;
  }

  /**
   * Keeps a final message with its row facts; `jsonLength` is the length of its stored content
   * and metadata.
   */
  add(
    message: GatewayMessage,
    branchId: string,
    contextStartDepth: number,
    jsonLength: number,
  ): void {
    if (message.status === "in_progress" || this.maxBytes <= 0) return;
    const bytes = jsonLength + ENTRY_OVERHEAD;
    if (bytes > this.maxBytes) return;
    const previous = this.#entries.get(message.id);
    if (previous !== undefined) {
      this.#entries.delete(message.id);
      this.#bytes -= previous.bytes;
    }
    this.#entries.set(message.id, {
      message: freezeMessage(message),
      branchId,
      contextStartDepth,
      bytes,
    });
    this.#bytes += bytes;
    if (this.#bytes <= this.maxBytes) return;
    for (const [id, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(id);
      this.#bytes -= entry.bytes;
    }
  }
}

interface CacheEntry {
  readonly message: GatewayMessage;
  readonly branchId: string;
  readonly contextStartDepth: number;
  readonly bytes: number;
}

/** Freezes a message: blocks hold only strings and booleans, so freezing them is enough. */
function freezeMessage(message: GatewayMessage): GatewayMessage {
  for (const block of message.content) Object.freeze(block);
  Object.freeze(message.content);
  deepFreeze(message.metadata);
  return Object.freeze(message);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
