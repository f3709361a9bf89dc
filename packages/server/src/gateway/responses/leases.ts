import type { StoreDatabase } from "../../store/database.js";
import {
  endAbandonedRow,
  findExpiredLeaseRows,
  renewLeaseRows,
} from "../../store/repositories/gateway-response-leases.js";
import type { GatewayMessageMetadata } from "../conversations/message-types.js";
import { parseStoredMetadata } from "../conversations/rows.js";

/** How long a lease lasts unless renewed (default; docs/server/responses.md, "Response lifecycle"). */
export const DEFAULT_LEASE_MILLISECONDS = 30_000;
/** The stop reason of a response ended because its server died. */
export const SERVER_INTERRUPTED = "server_interrupted";
/** Abandoned responses ended per round of reconciliation. */
const ENDED_PER_ROUND = 100;

export interface ResponseLeaseOptions {
  /** How long a lease lasts unless renewed; renewed every third of it. */
  readonly leaseMilliseconds?: number;
  /** The clock (tests). */
  readonly now?: () => Date;
}

/**
 * The leases of the in_progress responses one server answers. While it answers, the server
 * renews each lease every third of its length; a server that dies renews nothing, so its
 * responses' leases run out. Every server (at start and then every third of a lease) ends the
 * responses whose lease ran out: `incomplete`, stop reason `server_interrupted`, their content
 * as it was written. A held response whose row is no longer in_progress (cancelled or ended by
 * another server) is reported lost, so its answer stops.
 */
export class ResponseLeases {
  readonly leaseMilliseconds: number;
  readonly #database: StoreDatabase;
  readonly #now: () => Date;
  #onError: (error: unknown) => void = () => undefined;
  readonly #held = new Map<string, () => void>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #round: Promise<void> | undefined;

  constructor(database: StoreDatabase, options: ResponseLeaseOptions = {}) {
    this.#database = database;
    this.leaseMilliseconds = options.leaseMilliseconds ?? DEFAULT_LEASE_MILLISECONDS;
    this.#now = options.now ?? (() => new Date());
  }

  /** Renews the lease of `messageId` until `release`; `onLost` runs if it is ended elsewhere. */
  hold(messageId: string, onLost: () => void): void {
    this.#held.set(messageId, onLost);
  }

  release(messageId: string): void {
    this.#held.delete(messageId);
  }

  /** Renews every held lease; a held response no longer in_progress is released as lost. */
  async renew(): Promise<void> {
    const ids = [...this.#held.keys()];
    if (ids.length === 0) return;
    const expiresAt = new Date(this.#now().getTime() + this.leaseMilliseconds).toISOString();
    const renewed = await renewLeaseRows(this.#database.db, ids, expiresAt);
    for (const id of ids) {
      if (renewed.has(id)) continue;
      const onLost = this.#held.get(id);
      this.#held.delete(id);
      onLost?.();
    }
  }

  /**
   * Ends the responses whose lease ran out (any server's); returns their ids. A row that cannot
   * be ended (its metadata unreadable) is reported to the error handler and left for a person.
   */
  async endAbandoned(): Promise<string[]> {
    const ended: string[] = [];
    for (;;) {
      const now = this.#now().toISOString();
      const rows = await findExpiredLeaseRows(this.#database.db, now, ENDED_PER_ROUND);
      let endedNow = 0;
      for (const row of rows) {
        let final: { status: string; metadata: string; updated_at: string };
        try {
          const stored = parseStoredMetadata(row, row.metadata);
          const metadata: GatewayMessageMetadata = {
            caller: stored.caller,
            gateway: { ...stored.gateway, stopReason: SERVER_INTERRUPTED },
          };
          final = { status: "incomplete", metadata: JSON.stringify(metadata), updated_at: now };
        } catch (error) {
          this.#onError(error);
          continue;
        }
        if (await endAbandonedRow(this.#database.db, row, final, now)) {
          ended.push(row.id);
          endedNow++;
        }
      }
      // Another batch only when this one was full and all of it ended (never loops on a row
      // that cannot be ended).
      if (rows.length < ENDED_PER_ROUND || endedNow < rows.length) return ended;
    }
  }

  /**
   * Reconciles now, then renews and reconciles every third of a lease until `stop`. A round that
   * fails (the database unreachable, not migrated) is told to `onError`; the next one retries.
   */
  async start(onError: (error: unknown) => void): Promise<void> {
    this.#onError = onError;
    try {
      await this.endAbandoned();
    } catch (error) {
      onError(error);
    }
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(
      () => {
        if (this.#round !== undefined) return;
        this.#round = (async () => {
          try {
            await this.renew();
            await this.endAbandoned();
          } catch (error) {
            this.#onError(error);
          } finally {
            this.#round = undefined;
          }
        })();
      },
      Math.max(1, Math.floor(this.leaseMilliseconds / 3)),
    );
    this.#timer.unref();
  }

  /** Stops renewing and waits for a round under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }
}
