import pg from "pg";
import type { StoreDatabase } from "./database.js";

/**
 * Change notifications of PostgreSQL (`LISTEN`/`NOTIFY`): what lets a process keep a copy of a
 * few rows (API keys) and still see another process's change at once. Triggers created by the
 * migrations send them on commit (docs/store.md lists the channels).
 */
export interface ChangeListener {
  /** True while the connection listens: only then are no changes missed. */
  readonly listening: boolean;
  /** Stops listening and closes the connection. */
  close(): Promise<void>;
}

export interface ChangeHandlers {
  /** A committed change; `payload` as the trigger sent it. */
  onChange(payload: string): void;
  /**
   * Changes may have been missed or may come now: called when the connection is lost and when
   * it listens again. Forget every copy.
   */
  onReset(): void;
  /** A connection problem (it reconnects by itself). */
  onError?(error: Error): void;
}

/** Reconnection delays after a lost connection: doubling from 100 ms up to 5 s. */
const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * Listens on `channel` with a connection of its own (not one of the pool's). Resolves after the
 * first attempt to listen, undefined when the database has no notifications (SQLite). When that
 * attempt failed, or the connection is lost later, `onError` is told and it tries again (after
 * 100 ms, doubling up to 5 s) until `close`; `listening` says whether it listens now.
 */
export async function listenForChanges(
  database: StoreDatabase,
  channel: string,
  handlers: ChangeHandlers,
): Promise<ChangeListener | undefined> {
  const { location } = database;
  if (location.dialect !== "postgres") return undefined;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;

  const lost = (error: Error | undefined, from: pg.Client) => {
    if (client !== from) return;
    client = undefined;
    from.removeAllListeners();
    from.on("error", () => undefined);
    void from.end().catch(() => undefined);
    if (listening) {
      listening = false;
      handlers.onReset();
    }
    if (error !== undefined) handlers.onError?.(error);
    if (closed) return;
    retry = setTimeout(() => void connect().catch(() => undefined), retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: location.url,
      keepAlive: true,
      // Shown in pg_stat_activity: which process listens.
      application_name: `verbatim notifications ${process.pid}`,
    });
    client = next;
    next.on("error", (error) => lost(error, next));
    next.on("end", () => lost(new Error("the notification connection ended"), next));
    next.on("notification", (message) => {
      if (message.channel === channel) handlers.onChange(message.payload ?? "");
    });
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
    } catch (error) {
      lost(error instanceof Error ? error : new Error(String(error)), next);
      throw error;
    }
    if (client !== next || closed) return;
    listening = true;
    retryMs = FIRST_RETRY_MS;
    // Changes made while nothing listened are unknown: start from nothing.
    handlers.onReset();
  };

  // A first attempt that fails has scheduled the next one already.
  await connect().catch(() => undefined);
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      listening = false;
      if (current !== undefined) {
        current.removeAllListeners();
        current.on("error", () => undefined);
        await current.end().catch(() => undefined);
      }
    },
  };
}
