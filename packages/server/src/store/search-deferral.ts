import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { sql, type Kysely } from "kysely";
import type { StoreDatabase } from "./database.js";
import type { StoreSchema } from "./schema.js";
import { SEARCH_INDEXES } from "./search-indexes.js";
import { inTransaction } from "./transaction.js";

/** How long a deferral holds without being renewed, and how often a running import renews it. */
const LEASE_MS = 10 * 60_000;
const RENEW_MS = 60_000;
/** Rows indexed per transaction when catching up (bounds the WAL and the memory of one). */
const CATCH_UP_ROWS = 20_000;

/** The end of a deferral: indexes the rows it left out, then lets the triggers index again. */
export interface SearchDeferral {
  finish(): Promise<void>;
}

const expiresAt = (): string => new Date(Date.now() + LEASE_MS).toISOString();

/** The process holding a deferral, as `host:pid`. */
const OWNER = `${hostname()}:${process.pid}`;

/** Whether a deferral's process is gone: its lease ran out, or it ran here and has exited. */
function ownerGone(deferral: { expires_at: string; owner: string }): boolean {
  if (deferral.expires_at <= new Date().toISOString()) return true;
  const [host, pid] = [
    deferral.owner.slice(0, deferral.owner.lastIndexOf(":")),
    Number(deferral.owner.slice(deferral.owner.lastIndexOf(":") + 1)),
  ];
  if (host !== hostname() || !Number.isInteger(pid) || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * For a bulk import: until `finish`, the SQLite store's search indexes (migration 0007) leave
 * rows inserted into their tables out, and `finish` indexes them all at once, each
 * `CATCH_UP_ROWS` rows in one statement, which costs a fraction of indexing them row by row at
 * every commit (docs/interop.md, "Performance"). Rows other writers insert meanwhile are left
 * out too and indexed by `finish` as well: search finds everything once it returns. The
 * deferral is a lease renewed every minute; if the process dies, it expires after 10 minutes
 * (the triggers index again), and the next `catchUpSearchIndex` (after every `migrateDatabase`:
 * the next import, `verbatim serve`, `db migrate`) indexes what it left out, at once when the
 * dead process ran on the same host. PostgreSQL has no such index: nothing to do.
 */
export async function deferSearchIndex(database: StoreDatabase): Promise<SearchDeferral> {
  if (database.location.dialect !== "sqlite") return { finish: async () => undefined };
  await catchUpSearchIndex(database);
  const id = randomUUID();
  const starts = await inTransaction(database, async (trx) => {
    const after = new Map<string, number>();
    for (const { table } of SEARCH_INDEXES) {
      const row = await sql<{
        last: number | null;
      }>`select max(rowid) as last from ${sql.table(table)}`.execute(trx);
      const rowid = Number(row.rows[0]?.last ?? 0);
      after.set(table, rowid);
      await sql`insert into verbatim_search_deferrals (id, table_name, after_rowid, expires_at, owner)
        values (${`${id}/${table}`}, ${table}, ${rowid}, ${expiresAt()}, ${OWNER})`.execute(trx);
    }
    return after;
  });
  const renew = setInterval(() => {
    sql`update verbatim_search_deferrals set expires_at = ${expiresAt()} where id like ${`${id}/%`}`
      .execute(database.db)
      .catch(() => undefined);
  }, RENEW_MS);
  renew.unref();
  return {
    async finish() {
      clearInterval(renew);
      for (const { table } of SEARCH_INDEXES)
        await indexLeftOut(database, table, starts.get(table) ?? 0, `${id}/${table}`);
    },
  };
}

/**
 * Indexes the rows that deferrals of imports that died left out (their lease ran out, or their
 * process on this host is gone), and removes those deferrals. Cheap when there are none (one
 * read of a table that is empty).
 */
export async function catchUpSearchIndex(database: StoreDatabase): Promise<void> {
  if (database.location.dialect !== "sqlite") return;
  const deferrals = await sql<{
    id: string;
    table_name: string;
    after_rowid: number;
    expires_at: string;
    owner: string;
  }>`select id, table_name, after_rowid, expires_at, owner from verbatim_search_deferrals`.execute(
    database.db,
  );
  for (const deferral of deferrals.rows.filter(ownerGone))
    await indexLeftOut(database, deferral.table_name, Number(deferral.after_rowid), deferral.id);
}

/**
 * Indexes the rows of `tableName` after `afterRowid` that its search index does not hold,
 * `CATCH_UP_ROWS` at a time while the deferral still holds, then the last ones in the
 * transaction that removes the deferral (under the write lock, so that no row inserted
 * meanwhile is missed). A crash anywhere leaves the deferral in place to be caught up again
 * (rows indexed already are skipped).
 */
async function indexLeftOut(
  database: StoreDatabase,
  tableName: string,
  afterRowid: number,
  deferralId: string,
): Promise<void> {
  const search = SEARCH_INDEXES.find((entry) => entry.table === tableName);
  const t = sql.table(tableName);
  const lastRowid = async (db: Kysely<StoreSchema>): Promise<number> =>
    Number(
      (await sql<{ last: number | null }>`select max(rowid) as last from ${t}`.execute(db)).rows[0]
        ?.last ?? 0,
    );
  const indexRows = async (db: Kysely<StoreSchema>, from: number, to: number): Promise<void> => {
    if (search === undefined) return;
    const i = sql.table(search.index);
    const c = sql.ref(search.column);
    await sql`insert into ${i}(rowid, ${c})
      select rowid, ${c} from ${t}
      where rowid > ${from} and rowid <= ${to}
        and not exists (select 1 from ${sql.table(`${search.index}_docsize`)} d where d.id = ${t}.rowid)`.execute(
      db,
    );
  };
  let from = afterRowid;
  const end = search === undefined ? from : await lastRowid(database.db);
  for (; from + CATCH_UP_ROWS < end; from += CATCH_UP_ROWS) {
    const to = from + CATCH_UP_ROWS;
    await inTransaction(database, (trx) => indexRows(trx, from, to));
  }
  await inTransaction(database, async (trx) => {
    if (search !== undefined) await indexRows(trx, from, await lastRowid(trx));
    await sql`delete from verbatim_search_deferrals where id = ${deferralId}`.execute(trx);
  });
}

/**
 * Each search index checked (FTS5's `integrity-check`, which throws when the index is not
 * consistent; against the table's rows too when no deferral holds the table) with how many rows the table has and how many the
 * index holds, and how many deferrals are held. SQLite only (an empty list on PostgreSQL).
 */
export async function checkSearchIndex(
  database: StoreDatabase,
): Promise<{ table: string; rows: number; indexed: number; deferrals: number }[]> {
  if (database.location.dialect !== "sqlite") return [];
  const checked = [];
  for (const { table, index } of SEARCH_INDEXES) {
    const counts = await sql<{ rows: number; indexed: number; deferrals: number }>`select
      (select count(*) from ${sql.table(table)}) as rows,
      (select count(*) from ${sql.table(`${index}_docsize`)}) as indexed,
      (select count(*) from verbatim_search_deferrals where table_name = ${table}) as deferrals`.execute(
      database.db,
    );
    const row = counts.rows[0];
    const deferrals = Number(row?.deferrals ?? 0);
    // Against the table's rows when no deferral leaves rows out; the index alone otherwise.
    const i = sql.table(index);
    await sql`insert into ${i}(${i}, rank) values ('integrity-check', ${deferrals === 0 ? 1 : 0})`.execute(
      database.db,
    );
    checked.push({
      table,
      rows: Number(row?.rows ?? 0),
      indexed: Number(row?.indexed ?? 0),
      deferrals,
    });
  }
  return checked;
}
