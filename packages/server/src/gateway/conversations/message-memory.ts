import type { AnchorRow, MessageRow } from "../../store/repositories/gateway-messages.js";
import { MessageCache } from "./message-cache.js";
import type { GatewayMessage } from "./message-types.js";

/** In_progress messages remembered for a one-statement finish (the oldest are forgotten). */
const MAX_REMEMBERED_STARTS = 10_000;

/** An in_progress message a store wrote, with the row facts a finish needs. */
export interface StartedMessage {
  readonly message: GatewayMessage;
  readonly branchId: string;
  readonly contextStartDepth: number;
  readonly contentText: string;
}

/**
 * What a message store keeps in memory: the final messages it read or wrote (a byte-bounded
 * cache: a final message never changes, so this is safe with several processes on one
 * database) and the in_progress messages it started, so that finishing one takes one statement.
 */
export class MessageMemory {
  readonly #cache: MessageCache;
  readonly #started = new Map<string, StartedMessage>();

  constructor(cacheBytes: number) {
    this.#cache = new MessageCache(cacheBytes);
  }

  /** An in_progress message this store wrote, so that finishing it takes one statement. */
  rememberStarted(message: GatewayMessage, row: MessageRow): void {
    // A copy: the caller owns the returned message and may change it.
    this.#started.set(message.id, {
      message: structuredClone(message),
      branchId: row.branch_id,
      contextStartDepth: row.context_start_depth,
      contentText: row.content,
    });
    for (const id of this.#started.keys()) {
      if (this.#started.size <= MAX_REMEMBERED_STARTS) break;
      this.#started.delete(id);
    }
  }

  /** The started message `id` of `subject`, forgotten as it is handed out. */
  takeStarted(subject: string, id: string): StartedMessage | undefined {
    const started = this.#started.get(id);
    if (started === undefined || started.message.subjectUid !== subject) return undefined;
    this.#started.delete(id);
    return started;
  }

  /** Keeps a final message read or written with its row (the cache refuses in_progress ones). */
  cacheRow(
    message: GatewayMessage,
    row: Pick<MessageRow, "branch_id" | "context_start_depth" | "content" | "metadata">,
  ): void {
    this.#cache.add(
      message,
      row.branch_id,
      row.context_start_depth,
      row.content.length + row.metadata.length,
    );
  }

  /** Keeps a message written or read: a started one for its finish, a final one in the cache. */
  keepWritten(message: GatewayMessage, row: MessageRow): void {
    if (message.status === "in_progress") this.rememberStarted(message, row);
    else this.cacheRow(message, row);
  }

  /** Keeps a message finished by this store, from what it started. */
  cacheFinished(message: GatewayMessage, started: StartedMessage, bytes: number): void {
    this.#cache.add(message, started.branchId, started.contextStartDepth, bytes);
  }

  /** The cached final message `id`, of any subject. */
  get(id: string): GatewayMessage | undefined {
    return this.#cache.get(id);
  }

  /** What the message cache holds now (messages and counted bytes). */
  stats(): { readonly messages: number; readonly bytes: number } {
    return { messages: this.#cache.size, bytes: this.#cache.bytes };
  }

  /**
   * The anchor facts of a final message of this subject the cache holds: messages are never
   * deleted and a final message never changes, so they spare reading its row again.
   */
  knownAnchor(subject: string, id: string | null): { readonly knownAnchor?: AnchorRow } {
    if (id === null) return {};
    const entry = this.#cache.entry(id);
    if (entry === undefined || entry.message.subjectUid !== subject) return {};
    const { message } = entry;
    return {
      knownAnchor: {
        id: message.id,
        conversation_id: message.conversationId,
        branch_id: entry.branchId,
        depth: message.depth,
        context_start_depth: entry.contextStartDepth,
        status: message.status,
      },
    };
  }
}
