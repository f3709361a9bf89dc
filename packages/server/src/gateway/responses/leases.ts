import type { StoreDatabase } from "../../store/database.js";
import {
  claimExpiredLeaseRows,
  endAbandonedRow,
  expireHolderLeases,
  renewHolderLeases,
} from "../../store/repositories/gateway-response-leases.js";
import { inTransaction } from "../../store/transaction.js";
import { newId } from "../ids.js";
import type { GatewayMessageMetadata } from "../conversations/message-types.js";
import { parseStoredMetadata } from "../conversations/rows.js";

/** How long a lease lasts unless renewed (default; docs/server/responses.md, "Response lifecycle"). */
export const DEFAULT_LEASE_MILLISECONDS = 30_000;
/** The stop reason of a response ended because its server died. */
export const SERVER_INTERRUPTED = "server_interrupted";
/** Abandoned responses ended per round of reconciliation. */
const ENDED_PER_ROUND = 100;
/** Released responses remembered until the next renewal, at most. */
const RELEASED_AT_MOST = 100_000;

export interface ResponseLeaseOptions {
  /** How long a lease lasts unless renewed; renewed every third of it. */
  readonly leaseMilliseconds?: number;
  /**
   * The id the leases of this server name as their holder (default: a new one, `server_…`):
   * responses it starts are written with it (`leaseHolder`), and it renews them by it.
   */
  readonly holder?: string;
  /** The clock (tests). */
  readonly now?: () => Date;
}

/**
 * The leases of the in_progress responses one server answers. Every third of a lease the server
 * renews all its leases in one statement, by its holder id and the subjects it holds them for
 * (docs/scale.md, "N servers on one database"); a server that dies renews nothing, so its
 * responses' leases run out. Every server (at start and then every third of a lease) ends the
 * responses whose lease ran out, a bounded batch at a time, each claimed so that no two servers
 * end the same one: `incomplete`, stop reason `server_interrupted`, their content as it was
 * written. A held response whose row is no longer in_progress (cancelled or ended by another
 * server) is reported lost, so its answer stops.
 */
export class ResponseLeases {
  readonly leaseMilliseconds: number;
  /** This server's id, named by the leases it holds. */
  readonly holder: string;
  readonly #database: StoreDatabase;
  readonly #now: () => Date;
  #onError: (error: unknown) => void = () => undefined;
  /** The responses held, by id: their subject (each renewal names it) and what runs if lost. */
  readonly #held = new Map<string, { readonly subject: string; readonly onLost: () => void }>();
  /**
   * Released since the last renewal, by id, with their subject: a row of them still in_progress
   * is let run out.
   */
  readonly #released = new Map<string, string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #round: Promise<void> | undefined;

  constructor(database: StoreDatabase, options: ResponseLeaseOptions = {}) {
    this.#database = database;
    this.leaseMilliseconds = options.leaseMilliseconds ?? DEFAULT_LEASE_MILLISECONDS;
    this.holder = options.holder ?? newId("server");
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Renews the lease of the subject's `messageId` until `release`; `onLost` runs if it is ended
   * elsewhere.
   */
  hold(subject: string, messageId: string, onLost: () => void): void {
    this.#held.set(messageId, { subject, onLost });
  }

  release(messageId: string): void {
    const held = this.#held.get(messageId);
    if (held === undefined) return;
    this.#held.delete(messageId);
    // Bounded: without renewals (a store used without `start`) nothing empties it.
    if (this.#released.size < RELEASED_AT_MOST) this.#released.set(messageId, held.subject);
  }

  /**
   * Renews every lease of this holder for the subjects it holds or released (one statement per
   * 500 subjects); a held response no longer in_progress is released as lost. A row renewed
   * that was released (its end could not be written) gets its lease run out, so reconciliation
   * ends it. A row renewed that is neither held nor released is one just written whose hold
   * comes next: renewing it is right.
   */
  async renew(): Promise<void> {
    const released = [...this.#released];
    this.#released.clear();
    if (this.#held.size === 0 && released.length === 0) return;
    const now = this.#now();
    const expiresAt = new Date(now.getTime() + this.leaseMilliseconds).toISOString();
    const subjects = new Set(released.map(([, subject]) => subject));
    for (const { subject } of this.#held.values()) subjects.add(subject);
    const renewed = await renewHolderLeases(
      this.#database.db,
      this.holder,
      [...subjects],
      expiresAt,
    );
    // The released rows to let run out, by subject (rare: their end could not be written).
    const ended = new Map<string, string[]>();
    for (const [id, subject] of released) {
      if (!renewed.has(id) || this.#held.has(id)) continue;
      const ids = ended.get(subject);
      if (ids === undefined) ended.set(subject, [id]);
      else ids.push(id);
    }
    for (const [subject, ids] of ended) {
      await expireHolderLeases(this.#database.db, this.holder, subject, ids, now.toISOString());
    }
    for (const [id, { onLost }] of [...this.#held]) {
      if (renewed.has(id)) continue;
      this.#held.delete(id);
      onLost();
    }
  }

  /**
   * Ends the responses whose lease ran out (any server's but those this server holds); returns
   * their ids. A row that cannot be ended (its metadata unreadable) is reported to the error
   * handler and left for a person.
   */
  async endAbandoned(): Promise<string[]> {
    const ended: string[] = [];
    for (;;) {
      const now = this.#now().toISOString();
      const { claimed, endedNow } = await inTransaction(this.#database, async (db) => {
        const rows = await claimExpiredLeaseRows(
          db,
          now,
          ENDED_PER_ROUND,
          this.#database.capabilities.skipLocked,
        );
        let count = 0;
        for (const row of rows) {
          // Held here, so alive: its renewal came late (a slow statement), and ending it would
          // stop an answer still being written. Another server may end it (it cannot tell).
          if (this.#held.has(row.id)) continue;
          const final = this.#interrupted(row, now);
          if (final !== undefined && (await endAbandonedRow(db, row, final, now))) {
            ended.push(row.id);
            count++;
          }
        }
        return { claimed: rows.length, endedNow: count };
      });
      // Another batch only when this one was full and all of it ended (never loops on a row
      // that cannot be ended).
      if (claimed < ENDED_PER_ROUND || endedNow < claimed) return ended;
    }
  }

  /** The final state of an abandoned response, or undefined (reported) when unreadable. */
  #interrupted(
    row: { readonly id: string; readonly metadata: string },
    now: string,
  ): { status: string; metadata: string; updated_at: string } | undefined {
    try {
      const stored = parseStoredMetadata(row, row.metadata);
      const metadata: GatewayMessageMetadata = {
        caller: stored.caller,
        gateway: { ...stored.gateway, stopReason: SERVER_INTERRUPTED },
      };
      return { status: "incomplete", metadata: JSON.stringify(metadata), updated_at: now };
    } catch (error) {
      this.#onError(error);
      return undefined;
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
