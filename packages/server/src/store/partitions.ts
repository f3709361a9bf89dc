import { sql, type Kysely } from "kysely";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "./database.js";
import { describeLocation } from "./location.js";
import { SUBJECT_OWNED_TABLES } from "./subject-keys.js";

/** Most partitions a table may be split into (PostgreSQL plans slow down past a few thousand). */
export const MAX_PARTITIONS = 1024;

export interface PartitionReport {
  /** How many hash partitions each subject-owned table has now. */
  readonly partitions: number;
  /** The tables this call converted (none when they were partitioned already). */
  readonly converted: readonly string[];
}

/**
 * PostgreSQL: makes every subject-owned table hash-partitioned by `subject_uid` into `count`
 * partitions (`<table>_p0` … `<table>_p<count-1>`), so every statement that names the subject
 * (store/subject-keys.ts) reads and writes one partition, and the same schema can be
 * distributed by Citus (docs/scale.md, "Partitions"). A table that is not partitioned yet is
 * made again: created partitioned, its rows copied, its keys, indexes and triggers made again
 * under their names, the old table dropped. Foreign keys between them are declared per partition
 * (partition r of a table refers to partition r of the other: the same subjects hash there), so
 * a check reads one plain table instead of planning a partitioned one each time. One
 * transaction under the migrations' lock: servers
 * starting together convert once; readers and writers of the tables wait until it commits.
 * Tables already split into `count` partitions are left as they are; a different count is
 * refused (repartitioning is a copy to a new database: `verbatim export` / `import`).
 */
export async function partitionBySubject(
  database: StoreDatabase,
  count: number,
): Promise<PartitionReport> {
  const where = describeLocation(database.location);
  if (!Number.isInteger(count) || count < 2 || count > MAX_PARTITIONS) {
    throw new VerbatimError(
      "store_partitions_invalid",
      `--partitions must be a whole number from 2 to ${MAX_PARTITIONS}, not ${String(count)}`,
      { where, hint: "Pick a power of two near the servers × cores you expect, e.g. 16" },
    );
  }
  if (database.capabilities.dialect !== "postgres") {
    throw new VerbatimError(
      "store_partitions_invalid",
      "partitions are a PostgreSQL feature; a SQLite store is one file",
      { where, hint: "Leave --partitions out for SQLite, or use a postgres:// URL" },
    );
  }
  return database.db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    try {
      await sql`select pg_advisory_xact_lock(hashtext('verbatim.migrate:' || current_schema()))`.execute(
        connection,
      );
      const report = await convert(connection as Kysely<unknown>, count, where);
      await sql`commit`.execute(connection);
      return report;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

/** The line `db migrate` and `serve` print after converting tables. */
export function partitionLine(tables: number, partitions: number): string {
  return `hash-partitioned ${tables} subject-owned table(s) by subject_uid into ${partitions} partitions each`;
}

/** How many partitions each subject-owned table has (0: not partitioned). */
export async function subjectPartitions(db: Kysely<unknown>): Promise<Map<string, number>> {
  const rows = await sql<{ table: string; partitions: number; partitioned: boolean }>`
    select t.relname as "table", t.relkind = 'p' as partitioned,
      (select count(*) from pg_inherits i where i.inhparent = t.oid)::int as partitions
    from pg_class t
    where t.relnamespace = to_regnamespace(current_schema()) and t.relkind in ('r', 'p')
      and t.relname in (${sql.join([...SUBJECT_OWNED_TABLES])})`.execute(db);
  return new Map(rows.rows.map((row) => [row.table, row.partitioned ? row.partitions : 0]));
}

async function convert(
  db: Kysely<unknown>,
  count: number,
  where: string,
): Promise<PartitionReport> {
  const current = await subjectPartitions(db);
  const other = [...current].find(([, partitions]) => partitions !== 0 && partitions !== count);
  if (other !== undefined) {
    throw new VerbatimError(
      "store_partitions_invalid",
      `${other[0]} is split into ${other[1]} partitions already, not ${count}`,
      {
        where,
        hint: `Run with --partitions ${other[1]}, or copy the store into a new database partitioned as you want (verbatim export, then verbatim import)`,
        details: { table: other[0], partitions: other[1] },
      },
    );
  }
  const tables = SUBJECT_OWNED_TABLES.filter((table) => current.get(table) === 0);
  // Foreign keys declared on a whole table (all of them before a conversion; a later
  // migration's, or an earlier version's, after one): they go first (each depends on the key it
  // refers to) and come back per partition.
  const foreign = await sql<ForeignKey>`
    select t.relname as "table", r.relname as reference, c.confrelid::regclass::text as "referenceText",
      c.conname as name, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_class r on r.oid = c.confrelid
    where c.contype = 'f' and c.conparentid = 0 and t.relnamespace = to_regnamespace(current_schema())
      and t.relname in (${sql.join([...SUBJECT_OWNED_TABLES])})
      and r.relname in (${sql.join([...SUBJECT_OWNED_TABLES])})
    order by t.relname, c.conname`.execute(db);
  if (tables.length === 0 && foreign.rows.length === 0) return { partitions: count, converted: [] };
  for (const key of foreign.rows) {
    await sql`alter table ${sql.id(key.table)} drop constraint ${sql.id(key.name)}`.execute(db);
  }
  for (const table of tables) await partitionTable(db, table, count);
  for (const key of foreign.rows) await partitionForeignKey(db, key, count);
  return { partitions: count, converted: tables };
}

interface ForeignKey {
  readonly table: string;
  readonly reference: string;
  /** The referenced table as pg_get_constraintdef names it. */
  readonly referenceText: string;
  readonly name: string;
  readonly definition: string;
}

/**
 * A foreign key made again on each partition, referring to the partition of the same number:
 * both tables are hashed by `subject_uid` into the same count, and the key starts with it, so a
 * row and the row it refers to are always in partitions of one number. Declared on the whole
 * table, each insert's check would be a query on a partitioned table, planned again every time
 * (PostgreSQL 15 locks every partition of a generic plan).
 */
async function partitionForeignKey(
  db: Kysely<unknown>,
  key: ForeignKey,
  count: number,
): Promise<void> {
  const references = `REFERENCES ${key.referenceText}(`;
  if (!key.definition.includes(references)) {
    throw new Error(`foreign key ${key.name}: cannot read ${key.definition}`);
  }
  for (let remainder = 0; remainder < count; remainder++) {
    const definition = key.definition.replace(
      references,
      `REFERENCES "${key.reference}_p${remainder}"(`,
    );
    await sql`alter table ${sql.id(`${key.table}_p${remainder}`)}
      add constraint ${sql.id(`${key.name}_p${remainder}`)} ${sql.raw(definition)}`.execute(db);
  }
}

async function partitionTable(db: Kysely<unknown>, table: string, count: number): Promise<void> {
  const keys = await sql<{ name: string; definition: string }>`
    select c.conname as name, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c
    where c.conrelid = ${table}::regclass and c.contype in ('p', 'u')
    order by c.contype`.execute(db);
  const indexes = await sql<{ definition: string }>`
    select pg_get_indexdef(i.indexrelid) as definition
    from pg_index i
    where i.indrelid = ${table}::regclass
      and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`.execute(db);
  const triggers = await sql<{ definition: string }>`
    select pg_get_triggerdef(t.oid) as definition
    from pg_trigger t where t.tgrelid = ${table}::regclass and not t.tgisinternal`.execute(db);
  const staging = `${table}__partitioned`;
  await sql`create table ${sql.id(staging)} (like ${sql.id(table)}
      including defaults including identity including generated including storage including comments)
    partition by hash (subject_uid)`.execute(db);
  for (let remainder = 0; remainder < count; remainder++) {
    await sql`create table ${sql.id(`${table}_p${remainder}`)} partition of ${sql.id(staging)}
      for values with (modulus ${sql.lit(count)}, remainder ${sql.lit(remainder)})`.execute(db);
  }
  await sql`insert into ${sql.id(staging)} select * from ${sql.id(table)}`.execute(db);
  await sql`drop table ${sql.id(table)}`.execute(db);
  await sql`alter table ${sql.id(staging)} rename to ${sql.id(table)}`.execute(db);
  for (const key of keys.rows) {
    await sql`alter table ${sql.id(table)} add constraint ${sql.id(key.name)} ${sql.raw(key.definition)}`.execute(
      db,
    );
  }
  for (const index of indexes.rows) await sql.raw(index.definition).execute(db);
  for (const trigger of triggers.rows) await sql.raw(trigger.definition).execute(db);
  await namePartitionIndexes(db, table);
}

/**
 * Each partition's index of `table` takes its table's index name and the partition's number
 * (PostgreSQL names them after their columns), so plans read as the table's own do. Indexes
 * named so already keep their names; a plain table has none to name.
 */
export async function namePartitionIndexes(db: Kysely<unknown>, table: string): Promise<void> {
  const children = await sql<{ child: string; name: string }>`
    select c.relname as child, p.relname || substring(t.relname from '_p[0-9]+$') as name
    from pg_index pi join pg_class p on p.oid = pi.indexrelid
      join pg_inherits i on i.inhparent = p.oid
      join pg_class c on c.oid = i.inhrelid
      join pg_index ci on ci.indexrelid = c.oid
      join pg_class t on t.oid = ci.indrelid
    where pi.indrelid = ${table}::regclass
      and c.relname <> p.relname || substring(t.relname from '_p[0-9]+$')`.execute(db);
  for (const index of children.rows) {
    await sql`alter index ${sql.id(index.child)} rename to ${sql.id(index.name)}`.execute(db);
  }
}
