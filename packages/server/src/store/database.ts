import BetterSqlite3 from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from "kysely";
import pg from "pg";
import { VerbatimError } from "verbatim-llm/core";
import { capabilitiesOf, type DialectCapabilities } from "./capabilities.js";
import { checkSchemaName, describeLocation, type DatabaseLocation } from "./location.js";
import { statementName } from "./prepared-statements.js";
import { registerSearchFunctions } from "./search-fold.js";
import { startCheckpointThread } from "./sqlite-checkpoints.js";
import type { StoreSchema } from "./schema.js";

/** An open store: the Kysely instance, what its dialect can do, and how to close it. */
export interface StoreDatabase {
  readonly db: Kysely<StoreSchema>;
  readonly capabilities: DialectCapabilities;
  readonly location: DatabaseLocation;
  close(): Promise<void>;
}

/** Sees each statement's text (and, on PostgreSQL, its parameters) before it runs. */
export type StatementObserver = (text: string, parameters?: readonly unknown[]) => void;

export interface OpenDatabaseOptions {
  /** PostgreSQL: most connections the pool opens (default 10). */
  readonly poolSize?: number;
  /**
   * PostgreSQL: run the query templates as named prepared statements (default true;
   * src/store/prepared-statements.ts). Off for a pooler that cannot keep them.
   */
  readonly preparedStatements?: boolean;
  /**
   * PostgreSQL behind a pooler in transaction mode (PgBouncer `pool_mode = transaction`,
   * docs/scale.md, "Behind a pooler"): no startup options, so no schema (`search_path`) may be
   * asked for; give the role or the database its search_path instead.
   */
  readonly pooler?: "transaction";
  /**
   * SQLite file: run WAL checkpoints on a thread of their own (store/sqlite-checkpoints.ts)
   * instead of inside the commit that crosses 1,000 pages (default false; `verbatim serve`
   * turns it on).
   */
  readonly checkpointThread?: boolean;
  /** Told when the checkpoint thread fails (the connection then checkpoints by itself again). */
  readonly onCheckpointError?: (message: string) => void;
  /**
   * Told the text of every statement before it runs, and on PostgreSQL its parameters (tests
   * audit which statements name the subject and read their plans, store/subject-keys.ts).
   */
  readonly onStatement?: StatementObserver;
}

/**
 * SQL text that starts with this comment returns each row as an array of its values in select
 * order, on both dialects (better-sqlite3 raw statements, pg `rowMode: "array"`): long reads
 * skip building an object per row. Use `selectRowArrays` (src/store/array-rows.ts).
 */
export const ARRAY_ROWS_MARKER = "/* verbatim: rows as arrays */ ";

const JSON_OID = 114;
const JSONB_OID = 3802;
const INT8_OID = 20;

/**
 * PostgreSQL values as the store reads them on both dialects: JSON columns as their text (the
 * store parses and validates them), 64-bit integers as numbers (counts and depths stay far
 * below 2^53).
 */
const postgresTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === JSON_OID || oid === JSONB_OID) return (value: string) => value;
    if (oid === INT8_OID) return (value: string) => Number(value);
    return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * Opens the store. SQLite: one connection in WAL mode with `synchronous=FULL` (every commit is
 * fsynced: durable when the call returns), foreign keys on, a 5 s busy timeout for other
 * processes and a 64 MiB page cache. PostgreSQL: a pg Pool; with `schema`, every connection works in that schema.
 * Opening does not migrate: call `migrateDatabase`.
 */
export async function openDatabase(
  location: DatabaseLocation,
  options: OpenDatabaseOptions = {},
): Promise<StoreDatabase> {
  const capabilities = capabilitiesOf(location.dialect);
  if (location.dialect === "sqlite") {
    let connection: BetterSqlite3.Database;
    try {
      connection = new BetterSqlite3(location.path);
      connection.pragma("journal_mode = WAL");
      connection.pragma("synchronous = FULL");
      connection.pragma("foreign_keys = ON");
      connection.pragma("busy_timeout = 5000");
      // 64 MiB of page cache (the default is 2 MiB): long contexts are read from memory.
      connection.pragma("cache_size = -65536");
      // Search over rows the FTS5 index does not hold yet (store/search-fold.ts).
      registerSearchFunctions(connection);
    } catch (error) {
      throw unreachable(location, error);
    }
    const db = new Kysely<StoreSchema>({
      dialect: new SqliteDialect({
        database: withStatementCache(connection, options.onStatement),
      }),
    });
    const checkpoints =
      options.checkpointThread === true && location.path !== ":memory:" && location.path !== ""
        ? await startCheckpointThread(connection, location.path, {
            ...(options.onCheckpointError ? { onError: options.onCheckpointError } : {}),
          }).catch((error: unknown) => {
            // Without the thread the connection checkpoints by itself, as SQLite does by default.
            options.onCheckpointError?.(String(error));
            return undefined;
          })
        : undefined;
    return {
      db,
      capabilities,
      location,
      close: async () => {
        await checkpoints?.stop();
        await db.destroy();
      },
    };
  }
  if (options.pooler === "transaction" && location.schema !== undefined) {
    throw new VerbatimError(
      "store_location_invalid",
      "a schema cannot be chosen behind a pooler in transaction mode",
      {
        where: describeLocation(location),
        hint: 'Use a database of its own, or set the role\'s search_path (ALTER ROLE … SET search_path); docs/scale.md, "Behind a pooler"',
      },
    );
  }
  const pool = new pg.Pool({
    Client: storeClient(options.preparedStatements !== false, options.onStatement),
    connectionString: location.url,
    max: options.poolSize ?? 10,
    types: postgresTypes,
    ...(location.schema === undefined
      ? {}
      : { options: `-c search_path=${checkSchemaName(location.schema)}` }),
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  const db = new Kysely<StoreSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy();
    throw unreachable(location, error);
  }
  return { db, capabilities, location, close: () => db.destroy() };
}

/**
 * The store's pg client: SQL marked with `ARRAY_ROWS_MARKER` is answered with rows as arrays;
 * with `prepared`, SQL that has a statement name (src/store/prepared-statements.ts) runs as that
 * named prepared statement. Kysely calls `query(text, values)`; other calls pass through.
 */
function storeClient(
  prepared: boolean,
  onStatement: StatementObserver | undefined,
): typeof pg.Client {
  if (onStatement === undefined) return prepared ? PreparingStoreClient : StoreClient;
  const told = onStatement;
  return class extends (prepared ? PreparingStoreClient : StoreClient) {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      (this as { query: unknown }).query = (...args: unknown[]): unknown => {
        const [first, second] = args;
        const given = typeof first === "string" ? undefined : (first as pg.QueryConfig | null);
        const text = typeof first === "string" ? first : given?.text;
        const values = Array.isArray(second) ? second : given?.values;
        if (typeof text === "string") told(text, values);
        return query(...args);
      };
    }
  };
}

function statementClient(prepared: boolean): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      (this as { query: unknown }).query = (...args: unknown[]): unknown => {
        const [text, values] = args;
        if (typeof text !== "string" || args.length > 2) return query(...args);
        const name = prepared ? statementName(text) : undefined;
        const arrays = text.startsWith(ARRAY_ROWS_MARKER);
        if (name === undefined && !arrays) return query(...args);
        return query({
          text,
          values,
          ...(name === undefined ? {} : { name }),
          ...(arrays ? { rowMode: "array" } : {}),
        });
      };
    }
  };
}

const StoreClient = statementClient(false);
const PreparingStoreClient = statementClient(true);

const STATEMENT_CACHE_SIZE = 200;

/**
 * The connection as Kysely's SQLite dialect uses it, with prepared statements kept by their SQL
 * text: Kysely prepares every query it runs, and preparing costs more than running the small
 * statements of an append. The store's queries are few and fixed, so the cache stays small;
 * past its size, statements are prepared each time as before.
 */
function withStatementCache(
  connection: BetterSqlite3.Database,
  onStatement: StatementObserver | undefined,
): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => {
      connection.close();
    },
    prepare: (text: string) => {
      onStatement?.(text);
      let statement = cache.get(text);
      if (statement === undefined) {
        statement = connection.prepare(text);
        if (text.startsWith(ARRAY_ROWS_MARKER)) statement.raw(true);
        if (cache.size < STATEMENT_CACHE_SIZE) cache.set(text, statement);
      }
      return statement;
    },
  };
}

function unreachable(location: DatabaseLocation, error: unknown): VerbatimError {
  const reason = error instanceof Error ? error.message : String(error);
  return new VerbatimError("store_unreachable", `cannot open the database: ${reason}`, {
    where: describeLocation(location),
    hint:
      location.dialect === "sqlite"
        ? "Check that the folder exists and is writable"
        : "Check that PostgreSQL runs, the URL (user, host, port, database) and its access rules",
    cause: error,
  });
}
