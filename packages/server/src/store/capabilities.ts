/**
 * The real differences between the two dialects, as flags: queries are written once, and only
 * the places that read a flag differ.
 */
export interface DialectCapabilities {
  readonly dialect: "sqlite" | "postgres";
  /** Column type for JSON values: SQLite `text`, PostgreSQL `json` (kept as written, unlike jsonb). */
  readonly jsonColumnType: "text" | "json";
  /** PostgreSQL: migrations run under a session advisory lock so several servers can start at once. */
  readonly advisoryLocks: boolean;
  /**
   * SQLite: write transactions start with `BEGIN IMMEDIATE`, taking the write lock up front so
   * two processes never deadlock upgrading a read lock. PostgreSQL: a plain `BEGIN` (row locks).
   */
  readonly beginStatement: "begin immediate" | "begin";
  /**
   * PostgreSQL: INSERT and UPDATE inside WITH, so a write of several statements can be one
   * statement (one round trip, atomic without BEGIN and COMMIT). SQLite has none, and needs none:
   * its statements cost no round trip.
   */
  readonly writesInWith: boolean;
  /**
   * SQLite: a statement runs in the calling thread and holds its event loop until it returns
   * (a commit included). PostgreSQL: a statement is a round trip, the event loop free meanwhile.
   */
  readonly runsInThread: boolean;
  /**
   * PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`, so servers sharing a periodic job each claim
   * rows no other holds. SQLite has none, and needs none: a write transaction holds the whole
   * database (`BEGIN IMMEDIATE`).
   */
  readonly skipLocked: boolean;
}

export function capabilitiesOf(dialect: "sqlite" | "postgres"): DialectCapabilities {
  return dialect === "sqlite"
    ? {
        dialect,
        jsonColumnType: "text",
        advisoryLocks: false,
        beginStatement: "begin immediate",
        writesInWith: false,
        runsInThread: true,
        skipLocked: false,
      }
    : {
        dialect,
        jsonColumnType: "json",
        advisoryLocks: true,
        beginStatement: "begin",
        writesInWith: true,
        runsInThread: false,
        skipLocked: true,
      };
}
