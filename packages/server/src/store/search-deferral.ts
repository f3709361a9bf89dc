import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { sql, type Kysely } from "kysely";
import type { StoreDatabase } from "./database.js";
import type { StoreSchema } from "./schema.js";
import { SEARCH_INDEXES } from "./search-indexes.js";
import { ACROSS_SUBJECTS } from "./subject-keys.js";
import { inTransaction } from "./transaction.js";

/**
 * Ends the statements on the indexed tables: a search index holds every subject's rows, so its
 * upkeep (a deferral's start, the catch-up, the check) reads rowid ranges of the whole table,
 * maintenance across subjects (store/subject-keys.ts).
 */
const ACROSS = sql.raw(ACROSS_SUBJECTS);

/** How long a deferral holds without being renewed, and how often a running import renews it. */
const LEASE_MS = 10 * 60_000;
const RENEW_MS = 60_000;
/** What a pending deferral's lease says: over, so the insert triggers index new rows again. */
const PENDING = "1970-01-01T00:00:00.000Z";

/** How much one transaction of a catch-up indexes. */
export interface CatchUpPace {
  /** Rows at most per transaction. */
  readonly rows: number;
  /** Bytes of text at most per transaction (at least one row); undefined: no bound. */
  readonly bytes?: number;
  /** Awaited between transactions (e.g. a turn of the event loop). */
  readonly pause?: () => Promise<void>;
  /** Asked between transactions: true ends the catch-up there (the rest waits for the next). */
  readonly stopped?: () => boolean;
  /**
   * Pages of FTS5 merge work per transaction of its own, run between the indexing transactions
   * (a pause between each) until the index has none left to do (`mergeSearchIndex`); undefined:
   * none (FTS5's automerge alone, inside the indexing transactions).
   */
  readonly mergePages?: number;
}

/**
 * At once, in few large transactions (`verbatim db index`, `import --index-now`, `db migrate`):
 * 20,000 rows per statement, which costs a fraction of indexing them row by row.
 */
export const CATCH_UP_AT_ONCE: CatchUpPace = { rows: 20_000 };

/**
 * The server's pace (`startSearchIndexCatchUp`): 500 rows or 128 KiB of text per transaction,
 * whichever comes first, so that no transaction holds the event loop long (20,000 rows of 1 KB:
 * 30-33 ms of the main thread's CPU for the longest, 7-8 ms the median; 256 KiB: 47-49 ms, for
 * the same total; bench/interop/search-pending.ts), and FTS5 merge steps of 256 pages between
 * them (`mergeSearchIndex`: without them one commit merged 5,800 pages at once, 170-260 ms).
 */
export const SERVER_CATCH_UP_PACE = { rows: 500, bytes: 128 * 1024, mergePages: 256 } as const;

/** What a catch-up did: rows indexed, transactions, the longest one in milliseconds, and deferrals it ended. */
export interface CatchUpReport {
  rows: number;
  /** Transactions, the merge steps (`pace.mergePages`) among them. */
  transactions: number;
  longestMs: number;
  deferrals: number;
}

/** The end of a deferral. */
export interface SearchDeferral {
  /**
   * Ends the lease: from now on the insert triggers index new rows again. The rows it left out
   * stay in the deferral, pending, for `catchUpSearchIndex` (search finds them meanwhile:
   * console-search.ts); with `index: true` they are indexed before it returns.
   */
  finish(options?: { readonly index?: boolean }): Promise<void>;
}

const expiresAt = (): string => new Date(Date.now() + LEASE_MS).toISOString();

/** The process holding a deferral, as `host:pid`. */
const OWNER = `${hostname()}:${process.pid}`;

/** Whether a deferral's process is gone: its lease ran out (or it is pending), or it ran here and has exited. */
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
 * rows inserted into their tables out (theirs and any other writer's), which costs nothing
 * per row; `finish` ends the lease (the triggers index new rows again) and leaves the deferral
 * pending: its rows are indexed afterwards by `catchUpSearchIndex` (the server does it in the
 * background, `verbatim db index` and `db migrate` at once), and search finds them meanwhile
 * (console-search.ts scans the rows after a deferral's start that the index does not hold).
 * The deferral is a lease renewed every minute; if the process dies, it expires after 10
 * minutes, or at once for a process of this host that is gone, and is caught up as a pending
 * one. PostgreSQL has no such index: nothing to do.
 */
export async function deferSearchIndex(database: StoreDatabase): Promise<SearchDeferral> {
  if (database.location.dialect !== "sqlite") return { finish: async () => undefined };
  const id = randomUUID();
  await inTransaction(database, async (trx) => {
    for (const { table } of SEARCH_INDEXES) {
      const row = await sql<{
        last: number | null;
      }>`select max(rowid) as last from ${sql.table(table)} ${ACROSS}`.execute(trx);
      const rowid = Number(row.rows[0]?.last ?? 0);
      await sql`insert into verbatim_search_deferrals (id, table_name, after_rowid, expires_at, owner)
        values (${`${id}/${table}`}, ${table}, ${rowid}, ${expiresAt()}, ${OWNER})`.execute(trx);
    }
  });
  const renew = setInterval(() => {
    sql`update verbatim_search_deferrals set expires_at = ${expiresAt()}
      where id like ${`${id}/%`} and expires_at > ${PENDING}`
      .execute(database.db)
      .catch(() => undefined);
  }, RENEW_MS);
  renew.unref();
  return {
    async finish(options = {}) {
      clearInterval(renew);
      await sql`update verbatim_search_deferrals set expires_at = ${PENDING}
        where id like ${`${id}/%`}`.execute(database.db);
      if (options.index === true) await catchUpSearchIndex(database, CATCH_UP_AT_ONCE);
    },
  };
}

/**
 * Indexes the rows that pending deferrals (an import that finished) and deferrals of imports
 * that died (their lease ran out, or their process on this host is gone) left out, and removes
 * those deferrals; a running import's deferral is left alone. Cheap when there are none (one
 * read of a table that is empty). Each transaction indexes at most `pace.rows` rows (and
 * `pace.bytes` of text); `pace.pause` runs between them.
 */
export async function catchUpSearchIndex(
  database: StoreDatabase,
  pace: CatchUpPace = CATCH_UP_AT_ONCE,
): Promise<CatchUpReport> {
  const report: CatchUpReport = { rows: 0, transactions: 0, longestMs: 0, deferrals: 0 };
  if (database.location.dialect !== "sqlite") return report;
  const deferrals = await sql<{
    id: string;
    table_name: string;
    after_rowid: number;
    expires_at: string;
    owner: string;
  }>`select id, table_name, after_rowid, expires_at, owner from verbatim_search_deferrals
    order by after_rowid`.execute(database.db);
  for (const deferral of deferrals.rows.filter(ownerGone)) {
    if (pace.stopped?.() === true) break;
    // A dead import's lease may not have run out: pending from now, so that the triggers
    // index what other writers insert from here on (the rows up to now are caught up below).
    if (deferral.expires_at > PENDING)
      await sql`update verbatim_search_deferrals set expires_at = ${PENDING}
        where id = ${deferral.id}`.execute(database.db);
    await indexLeftOut(
      database,
      deferral.table_name,
      Number(deferral.after_rowid),
      deferral.id,
      pace,
      report,
    );
  }
  return report;
}

/**
 * Indexes the rows of `tableName` after `afterRowid` up to the last one when it starts that its
 * search index does not hold, in transactions of `pace`, and removes the deferral in the last
 * one. The deferral's lease is over, so rows inserted since are indexed by the triggers (or
 * belong to a running import's own deferral). A crash or a stop anywhere leaves the deferral in
 * place to be caught up again (rows indexed already are skipped).
 */
async function indexLeftOut(
  database: StoreDatabase,
  tableName: string,
  afterRowid: number,
  deferralId: string,
  pace: CatchUpPace,
  report: CatchUpReport,
): Promise<void> {
  const search = SEARCH_INDEXES.find((entry) => entry.table === tableName);
  const t = sql.table(tableName);
  const end = Number(
    (
      await sql<{
        last: number | null;
      }>`select max(rowid) as last from ${t} ${ACROSS}`.execute(database.db)
    ).rows[0]?.last ?? 0,
  );
  let from = afterRowid;
  for (;;) {
    if (search !== undefined && pace.mergePages !== undefined)
      await mergeSearchIndex(database, search.index, pace, report);
    if (pace.stopped?.() === true) return;
    const started = performance.now();
    const done = await inTransaction(
      database,
      async (trx) => {
        const to = search === undefined ? from : await batchEnd(trx, search, from, end, pace);
        if (to === undefined || search === undefined) {
          await sql`delete from verbatim_search_deferrals where id = ${deferralId}`.execute(trx);
          return true;
        }
        const c = sql.ref(search.column);
        const indexed = await sql`insert into ${sql.table(search.index)}(rowid, ${c})
        select rowid, ${c} from ${t}
        where rowid > ${from} and rowid <= ${to}
          and not exists (select 1 from ${sql.table(`${search.index}_docsize`)} d where d.id = ${t}.rowid)
        ${ACROSS}`.execute(trx);
        report.rows += Number(indexed.numAffectedRows ?? 0);
        from = to;
        return false;
      },
      // The commit does not wait for the disk: the index can be made again from the rows, and
      // a power loss loses the last commits whole, the deferral's removal with them.
      { waitForDisk: false },
    );
    report.transactions++;
    report.longestMs = Math.max(report.longestMs, performance.now() - started);
    if (done) {
      report.deferrals++;
      return;
    }
    await pace.pause?.();
  }
}

/**
 * FTS5 merge work on `index` in steps of `pace.mergePages` pages, a transaction each with
 * `pace.pause` between them, until FTS5 reports none left (no level holds `usermerge`, 4,
 * segments or more, and no merge is under way). Without it, the segment each indexing
 * transaction writes piles up on level 0 while automerge (a few dozen pages per transaction)
 * works through a merge of large segments, and at `crisismerge` (16) segments FTS5 finishes that
 * merge at once inside one commit: 5,800 pages and 170-180 ms of the event loop for 20 MB
 * pending over 20 MB indexed (bench/interop/search-pending.ts). A step is bounded by its pages
 * (and the longest term's doclist); the total is the work automerge would do, done sooner.
 */
async function mergeSearchIndex(
  database: StoreDatabase,
  index: string,
  pace: CatchUpPace,
  report: CatchUpReport,
): Promise<void> {
  const i = sql.table(index);
  for (;;) {
    if (pace.stopped?.() === true) return;
    const started = performance.now();
    // FTS5's 'merge' changes 2 rows or more when it did work (the structure record and a page).
    const changed = await inTransaction(
      database,
      async (trx) => {
        const before = await sql<{ n: number }>`select total_changes() as n`.execute(trx);
        await sql`insert into ${i}(${i}, rank) values ('merge', ${pace.mergePages})`.execute(trx);
        const after = await sql<{ n: number }>`select total_changes() as n`.execute(trx);
        return Number(after.rows[0]?.n ?? 0) - Number(before.rows[0]?.n ?? 0);
      },
      { waitForDisk: false },
    );
    report.transactions++;
    report.longestMs = Math.max(report.longestMs, performance.now() - started);
    if (changed < 2) return;
    await pace.pause?.();
  }
}

/**
 * The last rowid of the next transaction's rows: up to `pace.rows` rows after `from` (at most
 * `end`) that the index does not hold, cut after the row that reaches `pace.bytes`; undefined
 * when none is left.
 */
async function batchEnd(
  trx: Kysely<StoreSchema>,
  search: (typeof SEARCH_INDEXES)[number],
  from: number,
  end: number,
  pace: CatchUpPace,
): Promise<number | undefined> {
  const t = sql.table(search.table);
  const docsize = sql.table(`${search.index}_docsize`);
  if (pace.bytes === undefined) {
    // By rowid range: the rows of the range the index holds already are skipped by the insert.
    const next = await sql<{ first: number | null }>`select min(rowid) as first from ${t}
      where rowid > ${from} and rowid <= ${end}
        and not exists (select 1 from ${docsize} d where d.id = ${t}.rowid) ${ACROSS}`.execute(trx);
    const first = next.rows[0]?.first;
    return first == null ? undefined : Math.min(end, Number(first) - 1 + pace.rows);
  }
  const rows = await sql<{ id: number; size: number }>`select rowid as id,
      octet_length(${sql.ref(search.column)}) as size from ${t}
    where rowid > ${from} and rowid <= ${end}
      and not exists (select 1 from ${docsize} d where d.id = ${t}.rowid)
    order by rowid limit ${pace.rows} ${ACROSS}`.execute(trx);
  let bytes = 0;
  let last: number | undefined;
  for (const row of rows.rows) {
    last = Number(row.id);
    bytes += Number(row.size ?? 0);
    if (bytes >= pace.bytes) break;
  }
  return last;
}

/**
 * The server's catch-up: `catchUpSearchIndex` in small transactions (`pace`, by default
 * SERVER_CATCH_UP_PACE, a turn of the event loop between them, so that requests are
 * answered meanwhile) at once and then every `pollMs` (a read of the deferrals table, empty
 * most of the time), picking up what imports leave while the server runs. `stop` ends it
 * between two transactions and waits for the one running. SQLite only.
 */
export function startSearchIndexCatchUp(
  database: StoreDatabase,
  options: {
    readonly pollMs?: number;
    readonly pace?: Omit<CatchUpPace, "stopped" | "pause">;
  } = {},
): { stop(): Promise<void>; readonly report: CatchUpReport } {
  const report: CatchUpReport = { rows: 0, transactions: 0, longestMs: 0, deferrals: 0 };
  if (database.location.dialect !== "sqlite") return { stop: async () => undefined, report };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const pace: CatchUpPace = {
    ...SERVER_CATCH_UP_PACE,
    ...options.pace,
    pause: () => new Promise((resolve) => setImmediate(resolve)),
    stopped: () => stopped,
  };
  const run = async (): Promise<void> => {
    try {
      const done = await catchUpSearchIndex(database, pace);
      report.rows += done.rows;
      report.transactions += done.transactions;
      report.deferrals += done.deferrals;
      report.longestMs = Math.max(report.longestMs, done.longestMs);
    } catch {
      // Busy or closed: tried again at the next poll.
    }
    if (!stopped) {
      timer = setTimeout(() => {
        running = run();
      }, options.pollMs ?? 3000);
      timer.unref();
    }
  };
  running = run();
  return {
    report,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
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
      (select count(*) from verbatim_search_deferrals where table_name = ${table}) as deferrals
      ${ACROSS}`.execute(database.db);
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

/** How many deferrals (a table of an import each) the store holds: 0 when its index holds every row. */
export async function pendingSearchDeferrals(database: StoreDatabase): Promise<number> {
  if (database.location.dialect !== "sqlite") return 0;
  const row = await sql<{ n: number }>`select count(*) as n from verbatim_search_deferrals`.execute(
    database.db,
  );
  return Number(row.rows[0]?.n ?? 0);
}
